package httpapi

// NotReadyError is an error Options.Ready returns to tell callers of
// /readiness why the server is not ready. Reason goes into the answer as
// it is, so it must suit any caller (the probe needs no key): a phrase
// without paths or client input. Err, the cause, goes to the log.
type NotReadyError struct {
	Reason string
	Err    error
}

func (e *NotReadyError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

func (e *NotReadyError) Unwrap() error { return e.Err }
