package kinesis

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// checker collects validation errors as Kinesis writes them: "Value 'v'
// at 'field' failed to satisfy constraint: Member must ...", at most ten,
// joined into one ValidationException. Each action checks its fields in
// the order Kinesis reports them.
type checker struct{ errs []string }

const (
	namePattern     = "[a-zA-Z0-9_.-]+"
	hashKeyPattern  = `0|([1-9]\d{0,38})`
	seqNumPattern   = `0|([1-9]\d{0,128})`
	arnPattern      = `arn:aws.*:kinesis:.*:\d{12}:stream/\S+`
	consumerPattern = `^(arn):aws.*:kinesis:.*:\d{12}:.*stream\/[a-zA-Z0-9_.-]+\/consumer\/[a-zA-Z0-9_.-]+:[0-9]+`
)

var (
	arnRe         = regexp.MustCompile("^(?:" + arnPattern + ")$")
	consumerARNRe = regexp.MustCompile(consumerPattern + "$")
)

func (c *checker) fail(value, at, msg string) {
	if len(c.errs) < 10 {
		c.errs = append(c.errs, "Value "+value+" at '"+at+"' failed to satisfy constraint: "+msg)
	}
}

// err returns the ValidationException of the errors found, or nil.
func (c *checker) err() *apiError {
	switch n := len(c.errs); n {
	case 0:
		return nil
	case 1:
		return clientErr(typeValidation, "1 validation error detected: %s", c.errs[0])
	default:
		return clientErr(typeValidation, "%d validation errors detected: %s", n, strings.Join(c.errs, "; "))
	}
}

func quoted(s string) string { return "'" + s + "'" }

// javaLen is the length of s as Java counts it, in UTF-16 units.
func javaLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	if !utf8.ValidString(s) {
		return len(s)
	}
	return n
}

// strRule describes the constraints of a string field.
type strRule struct {
	required bool
	pattern  string // Kinesis's pattern, as its message writes it
	match    func(string) bool
	min, max int // lengths; max 0: none
}

var (
	nameRule    = strRule{required: true, pattern: namePattern, match: isName, min: 1, max: 128}
	optNameRule = strRule{pattern: namePattern, match: isName, min: 1, max: 128}
	hashKeyRule = strRule{pattern: hashKeyPattern, match: digitsUpTo(39)}
	seqRule     = strRule{pattern: seqNumPattern, match: digitsUpTo(129)}
	arnRule     = strRule{pattern: arnPattern, match: arnRe.MatchString, min: 1, max: 2048}
)

// str checks a string field; v is nil when the request left it out.
func (c *checker) str(at string, v *string, r strRule) {
	if v == nil {
		if r.required {
			c.fail("null", at, "Member must not be null")
		}
		return
	}
	s := *v
	if r.match != nil && !r.match(s) {
		c.fail(quoted(s), at, "Member must satisfy regular expression pattern: "+r.pattern)
	}
	if r.min > 0 && javaLen(s) < r.min {
		c.fail(quoted(s), at, "Member must have length greater than or equal to "+strconv.Itoa(r.min))
	}
	if r.max > 0 && javaLen(s) > r.max {
		c.fail(quoted(s), at, "Member must have length less than or equal to "+strconv.Itoa(r.max))
	}
}

// intRange checks an integer field.
func (c *checker) intRange(at string, v *num, required bool, lo, hi int64) {
	if v == nil {
		if required {
			c.fail("null", at, "Member must not be null")
		}
		return
	}
	n := int64(*v)
	if n < lo {
		c.fail(quoted(strconv.FormatInt(n, 10)), at, "Member must have value greater than or equal to "+strconv.FormatInt(lo, 10))
	}
	if n > hi {
		c.fail(quoted(strconv.FormatInt(n, 10)), at, "Member must have value less than or equal to "+strconv.FormatInt(hi, 10))
	}
}

// enum checks a string field against its values.
func (c *checker) enum(at string, v *string, required bool, values ...string) {
	if v == nil {
		if required {
			c.fail("null", at, "Member must not be null")
		}
		return
	}
	for _, x := range values {
		if *v == x {
			return
		}
	}
	c.fail(quoted(*v), at, "Member must satisfy enum value set: ["+strings.Join(values, ", ")+"]")
}

// data checks a Data blob: present, at most max bytes.
func (c *checker) data(at string, v *blob, max int) {
	if v == nil {
		c.fail("null", at, "Member must not be null")
		return
	}
	if n := len(*v); n > max {
		c.fail(quoted(heapBuffer(n)), at, "Member must have length less than or equal to "+strconv.Itoa(max))
	}
}

// heapBuffer is how Kinesis prints a blob in its messages.
func heapBuffer(n int) string {
	s := strconv.Itoa(n)
	return "java.nio.HeapByteBuffer[pos=0 lim=" + s + " cap=" + s + "]"
}

// isName reports whether s matches [a-zA-Z0-9_.-]+.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// digitsUpTo returns a matcher of 0|([1-9]\d{0,n-1}).
func digitsUpTo(n int) func(string) bool {
	return func(s string) bool {
		if s == "" || len(s) > n || (s[0] == '0' && len(s) > 1) {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
}

// streamRef is the StreamName and StreamARN of a request, which may name
// the stream either way.
type streamRef struct {
	StreamName *string `json:"StreamName,omitempty" cbor:"StreamName,omitempty"`
	StreamARN  *string `json:"StreamARN,omitempty" cbor:"StreamARN,omitempty"`
}

// check validates the two fields.
func (r *streamRef) check(c *checker) {
	c.str("streamName", r.StreamName, optNameRule)
	c.str("streamARN", r.StreamARN, arnRule)
}

// name returns the stream's name, from StreamName or from the ARN; it
// fails when the request gives neither, or two that disagree.
func (h *Handler) nameOf(r *streamRef) (string, *apiError) {
	var fromARN string
	if r.StreamARN != nil {
		arn := *r.StreamARN
		i := strings.LastIndex(arn, ":stream/")
		fromARN = arn[i+len(":stream/"):]
		parts := strings.Split(arn[:i], ":") // arn, partition, kinesis, region, account
		if len(parts) != 5 || parts[3] != h.cfg.region || parts[4] != h.cfg.account {
			return "", h.streamNotFound(fromARN)
		}
	}
	switch {
	case r.StreamName == nil && r.StreamARN == nil:
		return "", clientErr(typeInvalidArgument, "Either StreamName or StreamARN should be provided.")
	case r.StreamName == nil:
		return fromARN, nil
	case r.StreamARN != nil && fromARN != *r.StreamName:
		return "", clientErr(typeInvalidArgument, "StreamARN %s and StreamName %s do not name the same stream.", *r.StreamARN, *r.StreamName)
	}
	return *r.StreamName, nil
}

// named finishes the checks of a request naming a stream: it checks the
// stream's fields after the others c holds, then returns the name.
func (h *Handler) named(c *checker, r *streamRef) (string, *apiError) {
	r.check(c)
	if e := c.err(); e != nil {
		return "", e
	}
	return h.nameOf(r)
}
