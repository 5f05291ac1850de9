package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Secret returns the secret of a flag pair such as --encryption-key and
// --encryption-key-stdin: the flag's value, or one line read from stdin.
// name is the value flag's name ("--encryption-key"); giving both flags is a
// usage error. On a terminal the line is read without echo after prompt is
// written to stderr; otherwise it is the first line of stdin with only its
// line ending removed (a passphrase is used byte for byte). An empty
// secret read from stdin is an error; without either flag the result is "".
func Secret(stdin io.Reader, stderr io.Writer, value string, fromStdin bool, name, prompt string) (string, error) {
	if value != "" && fromStdin {
		return "", Usagef("give %s or %s-stdin, not both", name, name)
	}
	if !fromStdin {
		return value, nil
	}
	var line string
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
		line = string(b)
	} else {
		l, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read %s from stdin: %w", name, err)
		}
		line = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	if line == "" {
		return "", fmt.Errorf("%s-stdin: the passphrase read from stdin is empty", name)
	}
	return line, nil
}
