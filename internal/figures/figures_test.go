package figures

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a testing.TB that keeps what Record logs and reports.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	logs   []string
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

var (
	dup  = Figure{Test: "crash after every write", Example: "postgres", Name: "duplicates", Value: "0", Goal: "0"}
	conv = Figure{Test: "crash after every write", Example: "postgres", Name: "converged", Value: "20/20"}
)

func TestRecord(t *testing.T) {
	tests := []struct {
		name      string
		file      bool
		figs      []Figure
		want      []Figure // in the file
		wantLogs  []string
		wantError bool
	}{{
		name: "to the log only",
		figs: []Figure{dup, conv},
		wantLogs: []string{
			"figure: crash after every write | postgres | duplicates: 0 (goal 0)",
			"figure: crash after every write | postgres | converged: 20/20",
		},
	}, {
		name: "to the log and the file",
		file: true,
		figs: []Figure{dup, conv},
		want: []Figure{dup, conv},
		wantLogs: []string{
			"figure: crash after every write | postgres | duplicates: 0 (goal 0)",
			"figure: crash after every write | postgres | converged: 20/20",
		},
	}, {
		name:      "a figure without a value fails the test",
		figs:      []Figure{{Test: "t", Example: "e", Name: "n"}},
		wantLogs:  []string{"figure: t | e | n: "},
		wantError: true,
	}, {
		name:      "nothing of a bad batch is written",
		file:      true,
		figs:      []Figure{dup, {Example: "e", Name: "n", Value: "1"}},
		wantLogs:  []string{"figure: crash after every write | postgres | duplicates: 0 (goal 0)", "figure:  | e | n: 1"},
		wantError: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file {
				path = filepath.Join(t.TempDir(), "figures.jsonl")
			}
			t.Setenv(FileEnv, path)
			r := &recorder{TB: t}
			Record(r, tt.figs...)
			if diff := cmp.Diff(tt.wantLogs, r.logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			if got := len(r.errors) > 0; got != tt.wantError {
				t.Errorf("errors reported: %q, want some: %v", r.errors, tt.wantError)
			}
			if !tt.file {
				return
			}
			got, err := ReadFile(path)
			if len(tt.want) == 0 {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("ReadFile = %v, %v; want no file", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("figures in the file (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "figures.jsonl")
	t.Setenv(FileEnv, path)
	Record(t, dup)
	Record(t, conv)
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Figure{dup, conv}, got); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

func TestRecordWriteErrorFailsTheTest(t *testing.T) {
	// A directory cannot be opened for writing.
	t.Setenv(FileEnv, t.TempDir())
	r := &recorder{TB: t}
	Record(r, dup)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "open figures file") {
		t.Errorf("errors = %q, want one about opening the file", r.errors)
	}
}

// The helper process of TestRecordFromManyProcesses: it records
// helperFigures long figures when BOSUN_FIGURES_HELPER names its number.
const helperFigures = 300

func TestRecordHelperProcess(t *testing.T) {
	n := os.Getenv("BOSUN_FIGURES_HELPER")
	if n == "" {
		return // only run as a helper
	}
	long := strings.Repeat("x", 3000)
	for i := range helperFigures {
		Record(t, Figure{Test: "process " + n, Example: long, Name: strconv.Itoa(i), Value: long})
	}
}

// TestRecordFromManyProcesses appends from four processes at once, as test
// binaries of several packages do, with lines longer than a pipe's atomic
// write: every line must come out whole.
func TestRecordFromManyProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "figures.jsonl")
	const procs = 4
	var wg sync.WaitGroup
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestRecordHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), FileEnv+"="+path, "BOSUN_FIGURES_HELPER="+strconv.Itoa(p))
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("helper %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	figs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := make(map[string]int)
	for _, f := range figs {
		counts[f.Test]++
	}
	want := map[string]int{"process 0": helperFigures, "process 1": helperFigures, "process 2": helperFigures, "process 3": helperFigures}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("figures per process (-want +got):\n%s", diff)
	}
}

func TestFullAndSize(t *testing.T) {
	tests := []struct {
		env      string
		wantFull bool
		wantSize int
	}{
		{"", false, 5},
		{"short", false, 5},
		{"Full", false, 5},
		{"full", true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(BatteryEnv, tt.env)
			if got := Full(); got != tt.wantFull {
				t.Errorf("Full() = %v, want %v", got, tt.wantFull)
			}
			if got := Size(5, 200); got != tt.wantSize {
				t.Errorf("Size(5, 200) = %d, want %d", got, tt.wantSize)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []Figure
		wantErr string
	}{{
		name:    "lines and blank lines",
		content: `{"test":"t","example":"e","name":"n","value":"1"}` + "\n\n" + `{"test":"t","example":"e","name":"m","value":"2","goal":"2"}` + "\n",
		want:    []Figure{{Test: "t", Example: "e", Name: "n", Value: "1"}, {Test: "t", Example: "e", Name: "m", Value: "2", Goal: "2"}},
	}, {
		name:    "empty",
		content: "",
	}, {
		name:    "a broken line",
		content: `{"test":"t","example":"e","name":"n","value":"1"}` + "\n" + `{"test":"t",` + "\n",
		wantErr: "line 2: unexpected EOF",
	}, {
		name:    "an unknown field",
		content: `{"test":"t","example":"e","name":"n","value":"1","unit":"s"}` + "\n",
		wantErr: `line 1: json: unknown field "unit"`,
	}, {
		name:    "a figure without a name",
		content: `{"test":"t","example":"e","value":"1"}` + "\n",
		wantErr: `line 1: figure of "t" has no Name`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "figures.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) {
					t.Fatalf("ReadFile error = %v, want one ending %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadFile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file = %v, want fs.ErrNotExist", err)
	}
}

func TestTable(t *testing.T) {
	const header = "| test | example | figures |\n| --- | --- | --- |\n"
	tests := []struct {
		name string
		figs []Figure
		want string
	}{{
		name: "no figures",
		want: header,
	}, {
		name: "one row, figures in recorded order",
		figs: []Figure{dup, conv},
		want: header + "| crash after every write | postgres | duplicates: 0 (goal 0); converged: 20/20 |\n",
	}, {
		name: "rows sorted by test, then example",
		figs: []Figure{
			{Test: "lost responses", Example: "postgres", Name: "creates", Value: "20"},
			{Test: "conflicts", Example: "hello", Name: "converged", Value: "5/5"},
			{Test: "lost responses", Example: "cronjob", Name: "runs", Value: "1"},
			{Test: "conflicts", Example: "cronjob", Name: "converged", Value: "5/5"},
		},
		want: header +
			"| conflicts | cronjob | converged: 5/5 |\n" +
			"| conflicts | hello | converged: 5/5 |\n" +
			"| lost responses | cronjob | runs: 1 |\n" +
			"| lost responses | postgres | creates: 20 |\n",
	}, {
		name: "a later figure of the same name replaces the earlier in its place",
		figs: []Figure{
			dup, conv,
			{Test: dup.Test, Example: "hello", Name: "duplicates", Value: "1"},
			{Test: dup.Test, Example: dup.Example, Name: "duplicates", Value: "2", Goal: "0"},
		},
		want: header +
			"| crash after every write | hello | duplicates: 1 |\n" +
			"| crash after every write | postgres | duplicates: 2 (goal 0); converged: 20/20 |\n",
	}, {
		name: "pipes and line ends cannot break the table",
		figs: []Figure{{Test: "a|b", Example: "", Name: "n", Value: "1\n2\r\n3"}},
		want: header + `| a\|b |  | n: 1 2 3 |` + "\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Table(tt.figs)); diff != "" {
				t.Errorf("Table (-want +got):\n%s", diff)
			}
		})
	}
}
