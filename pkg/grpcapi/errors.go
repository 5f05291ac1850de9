package grpcapi

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"memsvc.dev/memsvc/pkg/memory"
)

// ErrorDomain is the domain of the google.rpc.ErrorInfo detail every error
// status carries; its reason is the CMP error code ("RECORD_NOT_FOUND"), so
// a client can tell apart what one gRPC code covers.
const ErrorDomain = "memsvc.dev"

// Code is the one table from CMP error codes to gRPC status codes. Unknown
// codes are INTERNAL.
func Code(c memory.Code) codes.Code {
	switch c {
	case memory.CodeNotFound:
		return codes.NotFound
	case memory.CodeValidation, memory.CodeStoreInvalid, memory.CodeContentTooLarge, memory.CodeModalityUnsupported:
		return codes.InvalidArgument
	case memory.CodeForgetUnconfirmed, memory.CodeVersionMismatch:
		return codes.FailedPrecondition
	case memory.CodeWorkingMemoryFull, memory.CodeRateLimited, memory.CodeInsufficientStorage:
		return codes.ResourceExhausted
	case memory.CodeDecayEngineBusy, memory.CodeConsolidationInProgress:
		return codes.Unavailable
	case memory.CodeImportConflict:
		return codes.AlreadyExists
	case memory.CodeUnauthorized:
		return codes.Unauthenticated
	case memory.CodeForbidden:
		return codes.PermissionDenied
	default: // EXPORT_FAILED, INTERNAL_ERROR and anything unknown
		return codes.Internal
	}
}

// msgInternal is what a client reads about a failure that is not a
// *memory.Error; the cause goes to the log.
const msgInternal = "internal error"

// statusOf turns err into the status a client sees. The second result
// reports whether err was an internal failure whose cause deserves a log
// line.
func statusOf(err error) (*status.Status, bool) {
	if st, ok := status.FromError(err); ok {
		return st, false
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, context.Canceled.Error()), false
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, context.DeadlineExceeded.Error()), false
	}
	me, ok := errors.AsType[*memory.Error](err)
	if !ok {
		me = &memory.Error{Code: memory.CodeInternal, Message: msgInternal}
	}
	st := status.New(Code(me.Code), memory.CutMessage(me.Message))
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: string(me.Code), Domain: ErrorDomain}}
	if me.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(me.RetryAfter) * time.Second)})
	}
	if withDetails, derr := st.WithDetails(details...); derr == nil {
		st = withDetails
	}
	return st, !ok || me.Code == memory.CodeInternal || me.Code == memory.CodeExportFailed
}

// serviceError keeps UNAUTHENTICATED for this server's own authentication:
// a service that reports UNAUTHORIZED (a store it cannot decrypt, an
// upstream server refusing a proxy's key) is failing, and the caller's key
// is not to blame. pkg/httpapi makes the same decision for 401.
func serviceError(err error) error {
	if me, ok := errors.AsType[*memory.Error](err); ok && me.Code == memory.CodeUnauthorized {
		return errors.Join(errors.New("service refused access"), errors.New(me.Message))
	}
	return err
}

// status converts err for the client and logs internal failures with the
// method and cause.
func (s *Server) status(ctx context.Context, err error) error {
	st, internal := statusOf(err)
	if internal {
		method, _ := grpc.Method(ctx)
		s.log.LogAttrs(ctx, slog.LevelError, "grpc request failed", slog.String("method", method), slog.String("err", err.Error()))
	}
	return st.Err()
}
