package redact

// Marker replaces every redacted secret.
const Marker = "[REDACTED]"

// PrivateKeyMarker replaces a whole PEM private key block.
const PrivateKeyMarker = "[REDACTED PRIVATE KEY]"

// Text returns s with every secret it recognises replaced by Marker (a PEM
// private key block by PrivateKeyMarker). Everything else is kept byte for
// byte. Text is idempotent: Text(Text(s)) == Text(s).
//
// The rules run in a fixed order, each on the output of the one before:
// private key blocks, URL credentials, token shapes, Bearer/Basic
// credentials, netrc entries, Kubernetes Secret data, command-line
// passwords, then key/value assignments. The order is what makes Text
// idempotent: a rule never creates a match for itself or for an earlier rule,
// and the assignment rule sees every marker the others produce (a value that
// is already a marker is kept as it is).
func Text(s string) string {
	s = redactPrivateKeys(s)
	s = redactURLCredentials(s)
	s = redactTokenShapes(s)
	s = redactAuthSchemes(s)
	s = redactNetrc(s)
	s = redactKubeSecrets(s)
	s = redactCommandLines(s)
	return redactAssignments(s)
}
