package cli

import "testing"

// TestGetenv: the first entry of a name wins, as for os.Getenv; a name is
// matched whole; an absent name is "".
func TestGetenv(t *testing.T) {
	environ := []string{"MEMSVC_SERVER_URL_X=no", "MEMSVC_SERVER_URL=first", "BROKEN", "MEMSVC_SERVER_URL=second", "EMPTY="}
	for name, want := range map[string]string{"MEMSVC_SERVER_URL": "first", "EMPTY": "", "MISSING": "", "BROKEN": ""} {
		if got := Getenv(environ, name); got != want {
			t.Errorf("Getenv(%s) = %q, want %q", name, got, want)
		}
	}
}
