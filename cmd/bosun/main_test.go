package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// runMainEnv, set to 1 in its environment, makes the test binary run the
// bosun command's main instead of the tests, so that tests can run the
// command as a user does: in a directory of their choice, with an exit
// status.
const runMainEnv = "BOSUN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs the bosun command with args in a process of its own, in the
// working directory dir, and returns its stdout, stderr and exit status.
func runMain(t *testing.T, dir string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		status = exit.ExitCode()
	default:
		t.Fatalf("run bosun %v: %v", args, err)
	}
	return out.String(), errOut.String(), status
}
