package kinesis

import (
	"net/http"
	"strings"
)

// checkAuth refuses a request that carries no AWS signature, as Kinesis
// does: without an Authorization header or the X-Amz-Algorithm query
// parameter it is MissingAuthenticationTokenException; with an
// Authorization header that lacks Credential, Signature or SignedHeaders,
// or with no date, IncompleteSignatureException; with both forms,
// InvalidSignatureException. The signature itself, and so the keys, are
// not checked, as no emulator can know the secret keys.
func checkAuth(r *http.Request) *apiError {
	auth := r.Header.Get("Authorization")
	if auth != "" && r.URL.RawQuery == "" && hasParam(auth, "Credential=") && hasParam(auth, "Signature=") &&
		hasParam(auth, "SignedHeaders=") && (r.Header.Get("X-Amz-Date") != "" || r.Header.Get("Date") != "") {
		return nil // the common case, checked without splitting the header
	}
	q := r.URL.Query()
	_, byQuery := q["X-Amz-Algorithm"]
	if auth != "" && byQuery {
		return clientErr(typeInvalidSignature, "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header.")
	}
	if auth == "" && !byQuery {
		return clientErr(typeMissingAuth, "Missing Authentication Token")
	}
	var msg strings.Builder
	if auth != "" {
		params := map[string]string{}
		fields := strings.FieldsFunc(auth, func(r rune) bool { return r == ',' || r == ' ' })
		for _, f := range fields[min(1, len(fields)):] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			params[k] = v
		}
		for _, p := range []string{"Credential", "Signature", "SignedHeaders"} {
			if params[p] == "" {
				msg.WriteString("Authorization header requires '" + p + "' parameter. ")
			}
		}
		if r.Header.Get("X-Amz-Date") == "" && r.Header.Get("Date") == "" {
			msg.WriteString("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ")
		}
		if msg.Len() > 0 {
			msg.WriteString("Authorization=" + auth)
		}
	} else {
		for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date"} {
			if q.Get(p) == "" {
				msg.WriteString("AWS query-string parameters must include '" + p + "'. ")
			}
		}
		if msg.Len() > 0 {
			msg.WriteString("Re-examine the query-string parameters.")
		}
	}
	if msg.Len() > 0 {
		return clientErr(typeIncompleteSignature, "%s", msg.String())
	}
	return nil
}

// hasParam reports whether the Authorization header auth has the
// parameter p ("Name=") with a value, as a word of its own.
func hasParam(auth, p string) bool {
	for i := 0; ; {
		j := strings.Index(auth[i:], p)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(p)
		if (j == 0 || auth[j-1] == ' ' || auth[j-1] == ',') && end < len(auth) && auth[end] != ',' && auth[end] != ' ' {
			return true
		}
		i = end
	}
}
