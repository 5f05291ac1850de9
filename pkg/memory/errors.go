package memory

import (
	"errors"
	"fmt"
)

// Code is a CMP error code. The fifteen codes of the CMP contract and their
// spellings are part of the wire contract; INSUFFICIENT_STORAGE and FORBIDDEN are
// memsvc's own additions (an older client reads it as a server error). Every
// transport maps them in one table of its own.
type Code string

// The CMP error codes.
const (
	CodeNotFound                Code = "RECORD_NOT_FOUND"
	CodeStoreInvalid            Code = "STORE_INVALID"
	CodeContentTooLarge         Code = "CONTENT_TOO_LARGE"
	CodeValidation              Code = "VALIDATION_ERROR"
	CodeModalityUnsupported     Code = "MODALITY_UNSUPPORTED"
	CodeWorkingMemoryFull       Code = "WORKING_MEMORY_FULL"
	CodeDecayEngineBusy         Code = "DECAY_ENGINE_BUSY"
	CodeConsolidationInProgress Code = "CONSOLIDATION_IN_PROGRESS"
	CodeExportFailed            Code = "EXPORT_FAILED"
	CodeImportConflict          Code = "IMPORT_CONFLICT"
	CodeForgetUnconfirmed       Code = "FORGET_UNCONFIRMED"
	CodeVersionMismatch         Code = "VERSION_MISMATCH"
	CodeUnauthorized            Code = "UNAUTHORIZED"
	CodeRateLimited             Code = "RATE_LIMITED"
	CodeInternal                Code = "INTERNAL_ERROR"
	// CodeInsufficientStorage refuses a write because the server's disk
	// is below its free-space floor; reads keep working.
	CodeInsufficientStorage Code = "INSUFFICIENT_STORAGE"
	// CodeForbidden refuses a request whose API key may not use the
	// namespace it names (HTTP 403); memsvc's own addition.
	CodeForbidden Code = "FORBIDDEN"
)

// Codes returns every CMP error code, in a new slice the caller may keep
// or change.
func Codes() []Code {
	return []Code{
		CodeNotFound, CodeStoreInvalid, CodeContentTooLarge, CodeValidation,
		CodeModalityUnsupported, CodeWorkingMemoryFull, CodeDecayEngineBusy,
		CodeConsolidationInProgress, CodeExportFailed, CodeImportConflict,
		CodeForgetUnconfirmed, CodeVersionMismatch, CodeUnauthorized,
		CodeRateLimited, CodeInternal, CodeInsufficientStorage, CodeForbidden,
	}
}

// Error is an error a client may see: a code, a message that says what was
// wrong and, where it helps, what to do. Internal failures are not Errors;
// transports report them as INTERNAL_ERROR with a generic message and log the
// cause.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, when non-zero, is the number of seconds after which the
	// request may succeed.
	RetryAfter uint32
}

func (e *Error) Error() string { return e.Message }

// Is makes errors.Is(err, ErrNotFound) and friends match any Error with the
// same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is. They carry only a code.
var (
	ErrNotFound            = &Error{Code: CodeNotFound}
	ErrValidation          = &Error{Code: CodeValidation}
	ErrContentTooLarge     = &Error{Code: CodeContentTooLarge}
	ErrModalityUnsupported = &Error{Code: CodeModalityUnsupported}
	ErrForgetUnconfirmed   = &Error{Code: CodeForgetUnconfirmed}
	ErrImportConflict      = &Error{Code: CodeImportConflict}
	ErrExportFailed        = &Error{Code: CodeExportFailed}
	ErrUnauthorized        = &Error{Code: CodeUnauthorized}
	ErrRateLimited         = &Error{Code: CodeRateLimited}
	ErrInternal            = &Error{Code: CodeInternal}
	ErrInsufficientStorage = &Error{Code: CodeInsufficientStorage}
	ErrForbidden           = &Error{Code: CodeForbidden}
)

// Errorf builds an Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound reports a missing record.
func NotFound(id ID) *Error {
	return &Error{Code: CodeNotFound, Message: "record not found: " + id.String()}
}

// Invalid reports bad input in the named field, for example
// Invalid("content.blocks[0].data", "text is not valid UTF-8").
func Invalid(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{Code: CodeValidation, Message: msg}
}

// CodeOf returns the CMP code of err: the code of the first Error in its
// chain, or INTERNAL_ERROR.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
