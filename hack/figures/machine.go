package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes the computer the tool runs on: CPU model and count,
// memory, operating system and the Go version the tool was built with
// (`go run` builds it with the toolchain that ran the tests).
func machine() string {
	return describeMachine(readText("/proc/cpuinfo"), readText("/proc/meminfo"), readText("/etc/os-release"),
		runtime.NumCPU(), runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
}

// readText returns the content of the file at path, or "" when it cannot
// be read (on a system without /proc, say).
func readText(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// describeMachine puts together the machine's description from the text
// of /proc/cpuinfo, /proc/meminfo and /etc/os-release. numCPU is the CPU
// count used when cpuinfo lists no processors.
func describeMachine(cpuinfo, meminfo, osRelease string, numCPU int, goVersion string) string {
	model, count := "unknown CPU", 0
	for key, value := range fields(cpuinfo, ':') {
		switch key {
		case "processor":
			count++
		case "model name":
			if model == "unknown CPU" && value != "" {
				model = value
			}
		}
	}
	if count == 0 {
		count = numCPU
	}
	cpus := fmt.Sprintf("%d CPUs", count)
	if count == 1 {
		cpus = "1 CPU"
	}

	memory := "unknown memory"
	for key, value := range fields(meminfo, ':') {
		if key != "MemTotal" {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(value, "kB")), 64)
		if err == nil {
			memory = fmt.Sprintf("%.1f GiB memory", kb/(1<<20))
		}
		break
	}

	system := "unknown OS"
	var name, version string
	for key, value := range fields(osRelease, '=') {
		switch key {
		case "PRETTY_NAME":
			system = unquote(value)
		case "NAME":
			name = unquote(value)
		case "VERSION":
			version = unquote(value)
		}
	}
	if system == "unknown OS" && name != "" {
		system = strings.TrimSpace(name + " " + version)
	}
	return fmt.Sprintf("%s, %s; %s; %s; %s", model, cpus, memory, system, goVersion)
}

// fields yields the key and value of each line of text that has sep in
// it, both trimmed of blanks.
func fields(text string, sep byte) func(yield func(key, value string) bool) {
	return func(yield func(key, value string) bool) {
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			key, value, ok := strings.Cut(sc.Text(), string(sep))
			if !ok {
				continue
			}
			if !yield(strings.TrimSpace(key), strings.TrimSpace(value)) {
				return
			}
		}
	}
}

// unquote removes the quotes around a value of os-release.
func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		return u
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}
