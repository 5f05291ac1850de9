package testproc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

const childEnv = "TESTPROC_CHILD"

// TestChild is the child of TestStartRunsOneTest: it prints what it was
// given and exits; run by go test on its own, it does nothing.
func TestChild(t *testing.T) {
	if v := os.Getenv(childEnv); v != "" {
		fmt.Println("child", v)
	}
}

// TestStartRunsOneTest runs TestChild as a child with an environment
// variable and reads its standard output: the one line TestChild prints
// (no test runner chatter) comes back, the child exits cleanly, and no
// other test of the package ran in it.
func TestStartRunsOneTest(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Fatal("the child ran a test other than TestChild")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := Command(ctx, "TestChild", childEnv+"=hello")
	sc := bufio.NewScanner(Start(t, cmd))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v (printed %q)", err, lines)
	}
	if len(lines) < 1 || lines[0] != "child hello" {
		t.Fatalf("child printed %q, want \"child hello\" first", lines)
	}
}
