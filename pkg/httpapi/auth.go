package httpapi

// msgMissingAuth says what to send when a request has no usable
// Authorization header.
const msgMissingAuth = `missing or malformed Authorization header; send "Authorization: Bearer <api key>"`
