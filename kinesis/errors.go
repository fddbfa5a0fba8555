package kinesis

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/xstreamgo/xstream"
)

// apiError is an error as Kinesis reports it: an HTTP status (400 for
// every client error, 500 for InternalFailure), a type such as
// "ResourceNotFoundException", written as the "__type" of the response
// body, and a message. Every failed request is answered with one.
type apiError struct {
	Status  int
	Type    string
	Message string
}

func (e *apiError) Error() string { return e.Type + ": " + e.Message }

// The error types the handler writes, as Kinesis names them.
const (
	typeResourceNotFound    = "ResourceNotFoundException"
	typeResourceInUse       = "ResourceInUseException"
	typeInvalidArgument     = "InvalidArgumentException"
	typeLimitExceeded       = "LimitExceededException"
	typeExpiredIterator     = "ExpiredIteratorException"
	typeValidation          = "ValidationException"
	typeSerialization       = "SerializationException"
	typeUnknownOperation    = "UnknownOperationException"
	typeMissingAuth         = "MissingAuthenticationTokenException"
	typeIncompleteSignature = "IncompleteSignatureException"
	typeInvalidSignature    = "InvalidSignatureException"
	typeAccessDenied        = "AccessDeniedException"
	typeInternalFailure     = "InternalFailure"
	typeThroughput          = "ProvisionedThroughputExceededException"
)

func clientErr(typ, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// The messages below are Kinesis's (as kinesalite, which copied them from
// the service, writes them).

func (h *Handler) streamNotFound(name string) *apiError {
	return clientErr(typeResourceNotFound, "Stream %s under account %s not found.", name, h.cfg.account)
}

func (h *Handler) streamExists(name string) *apiError {
	return clientErr(typeResourceInUse, "Stream %s under account %s already exists.", name, h.cfg.account)
}

func (h *Handler) notActive(name string, status string) *apiError {
	return clientErr(typeResourceInUse, "Stream %s under account %s not ACTIVE, instead in state %s", name, h.cfg.account, status)
}

func (h *Handler) shardNotFound(stream, shard string) *apiError {
	return clientErr(typeResourceNotFound, "Could not find shard %s in stream %s under account %s.", shard, stream, h.cfg.account)
}

func (h *Handler) shardMissing(stream, shard string) *apiError {
	return clientErr(typeResourceNotFound, "Shard %s in stream %s under account %s does not exist", shard, stream, h.cfg.account)
}

func (h *Handler) shardLimit(current, more int) *apiError {
	return clientErr(typeLimitExceeded, "This request would exceed the shard limit for the account %s in %s. "+
		"Current shard count for the account: %d. Limit: %d. Number of additional shards that would have resulted from this request: %d. "+
		"Refer to the AWS Service Limits page (http://docs.aws.amazon.com/general/latest/gr/aws_service_limits.html) "+
		"for current limits and how to request higher limits.", h.cfg.account, h.cfg.region, current, h.cfg.shardLimit, more)
}

var errInvalidIterator = clientErr(typeInvalidArgument, "Invalid ShardIterator.")

// internal reports a failure of the engine underneath (a closed DB, a
// Redis error) as Kinesis reports its own: InternalFailure, status 500,
// which the SDKs retry.
func internal(err error) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: typeInternalFailure, Message: err.Error()}
}

// engineErr turns an error of the engine into the Error Kinesis would
// answer: the engine's sentinels map to Kinesis's types; anything else is
// an InternalFailure.
func (h *Handler) engineErr(stream string, err error) *apiError {
	var e *apiError
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, xstream.ErrNoStream):
		return h.streamNotFound(stream)
	case errors.Is(err, xstream.ErrResourceInUse):
		return clientErr(typeResourceInUse, "Stream %s under account %s not ACTIVE, instead in state UPDATING", stream, h.cfg.account)
	case errors.Is(err, xstream.ErrInvalidIterator):
		return errInvalidIterator
	case errors.Is(err, xstream.ErrShardExpired), errors.Is(err, xstream.ErrPastTrimHorizon):
		return clientErr(typeExpiredIterator, "%s", trimPrefix(err))
	case errors.Is(err, xstream.ErrShardNotFound):
		return clientErr(typeResourceNotFound, "%s", trimPrefix(err))
	case errors.Is(err, xstream.ErrInvalidArgument), errors.Is(err, xstream.ErrInvalidHashKey),
		errors.Is(err, xstream.ErrInvalidPartitionKey), errors.Is(err, xstream.ErrShardClosed):
		return clientErr(typeInvalidArgument, "%s", trimPrefix(err))
	}
	return internal(err)
}

// trimPrefix returns an xstream error's message without its "xstream: "
// prefix.
func trimPrefix(err error) string {
	s := err.Error()
	const p = "xstream: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
