package servercmd

import (
	"strings"
	"testing"
)

// TestAskConfirm: forget, namespace drop and migrate-store-encryption
// without --confirm ask on a terminal and go ahead only on y or Y; any
// other answer, end of input included, says that nothing was done and
// exits 0. Without a terminal each is refused (exit 2) and says why.
func TestAskConfirm(t *testing.T) {
	pass := []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse battery staple"}
	const refused = " without --confirm (stdin is not a terminal, so there is no one to ask); nothing was "
	for _, tc := range []struct {
		name     string
		args     func(id string) []string
		env      []string
		prompt   string
		done     string // what a confirmed run prints on stdout
		aborted  string // what a declined one says on stderr
		refusal  string // the usage error without a terminal
		survives bool   // whether the record is still there after a confirmed run
	}{
		{
			name: "forget", args: func(id string) []string { return []string{"forget", id} },
			prompt: "Permanently delete record ", done: "Deleted 1 record(s)\n",
			aborted: "Aborted; nothing was deleted.\n", refusal: "refusing to delete" + refused + "deleted",
		},
		{
			name: "namespace drop", args: func(string) []string { return []string{"namespace", "drop", "default"} },
			prompt: "Permanently delete namespace default and everything in it? [y/N] ", done: "Dropped namespace default: 1 record(s)",
			aborted: "Aborted; nothing was deleted.\n", refusal: "refusing to delete" + refused + "deleted",
		},
		{
			name: "migrate", args: func(string) []string { return []string{"migrate-store-encryption", "--quiet"} }, env: pass,
			prompt: "Continue? [y/N] ", done: "Store encryption migration completed:\n",
			aborted: "Aborted; nothing was changed.\n", refusal: "refusing to migrate" + refused + "changed",
			survives: true,
		},
	} {
		for _, answer := range []string{"n\n", "yes\n", ""} {
			dir := t.TempDir()
			id := storeText(t, dir, "keep me")
			out, errOut, code := invocation{stdin: answer, env: tc.env, terminal: true}.run(t, dir, tc.args(id)...)
			if code != 0 || out != "" || !strings.Contains(errOut, tc.prompt) || !strings.HasSuffix(errOut, tc.aborted) {
				t.Errorf("%s answered %q: exit %d, stdout %q, stderr %q; want exit 0, the prompt and %q", tc.name, answer, code, out, errOut, tc.aborted)
			}
			if _, _, code := runEnv(t, dir, tc.env, "inspect", id); code != 0 {
				t.Errorf("%s answered %q: the record is gone (inspect exit %d)", tc.name, answer, code)
			}
		}
		for _, answer := range []string{"y\n", " Y \n"} {
			dir := t.TempDir()
			id := storeText(t, dir, "delete me")
			out, errOut, code := invocation{stdin: answer, env: tc.env, terminal: true}.run(t, dir, tc.args(id)...)
			if code != 0 || !strings.Contains(out, tc.done) || !strings.Contains(errOut, tc.prompt) || strings.Contains(errOut, "Aborted") {
				t.Errorf("%s answered %q: exit %d, stdout %q, stderr %q; want exit 0 and %q", tc.name, answer, code, out, errOut, tc.done)
			}
			if _, _, code := runEnv(t, dir, tc.env, "inspect", id); (code == 0) != tc.survives {
				t.Errorf("%s answered %q: inspect exit %d afterwards", tc.name, answer, code)
			}
		}
		dir := t.TempDir()
		id := storeText(t, dir, "keep me")
		_, errOut, code := invocation{stdin: "y\n", env: tc.env}.run(t, dir, tc.args(id)...)
		if code != 2 || !strings.Contains(errOut, tc.refusal) || strings.Contains(errOut, tc.prompt) {
			t.Errorf("%s without a terminal: exit %d, stderr %q; want exit 2 and %q", tc.name, code, errOut, tc.refusal)
		}
	}
}
