package launcher

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStartTime returns the start time of process pid, in clock ticks since
// boot (field 22 of /proc/PID/stat). Together with the pid it names one
// process for good: a reused pid has a later start time.
func procStartTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatStartTime(data)
}

// parseStatStartTime extracts field 22 (starttime) from the contents of
// /proc/PID/stat. Field 2, the command name, is in parentheses and may hold
// spaces and parentheses itself, so fields are counted after the last ')'.
func parseStatStartTime(data []byte) (uint64, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, fmt.Errorf("proc stat %q: no ')' closing the command name", clip(string(data)))
	}
	fields := strings.Fields(string(data[end+1:]))
	const startField = 22 - 3 // fields after ')' start at field 3 (state)
	if len(fields) <= startField {
		return 0, fmt.Errorf("proc stat %q: %d fields after the command name; want at least %d", clip(string(data)), len(fields), startField+1)
	}
	t, err := strconv.ParseUint(fields[startField], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat: start time %q: not a decimal number", fields[startField])
	}
	return t, nil
}

// launcherRecord identifies the gorun process that owns a session directory.
type launcherRecord struct {
	Pid   int
	Start uint64 // procStartTime(Pid) when the session was created
}

const launcherHeader = "gorun-launcher 1"

func formatLauncherRecord(r launcherRecord) []byte {
	return fmt.Appendf(nil, "%s\npid %d\nstart %d\n", launcherHeader, r.Pid, r.Start)
}

// parseLauncherRecord reads what formatLauncherRecord writes; it returns an
// error, never panics, on anything else.
func parseLauncherRecord(data []byte) (launcherRecord, error) {
	lines := strings.Split(string(data), "\n")
	if len(lines) != 4 || lines[0] != launcherHeader || lines[3] != "" {
		return launcherRecord{}, fmt.Errorf("launcher record %q: want %q, a pid line and a start line", clip(string(data)), launcherHeader)
	}
	var r launcherRecord
	pid, ok := strings.CutPrefix(lines[1], "pid ")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n < 1 || strconv.Itoa(n) != pid {
		return launcherRecord{}, fmt.Errorf("launcher record: pid line %q; want \"pid N\" with N >= 1", lines[1])
	}
	r.Pid = n
	start, ok := strings.CutPrefix(lines[2], "start ")
	t, err := strconv.ParseUint(start, 10, 64)
	if !ok || err != nil || strconv.FormatUint(t, 10) != start {
		return launcherRecord{}, fmt.Errorf("launcher record: start line %q; want \"start T\" with T a decimal number", lines[2])
	}
	r.Start = t
	return r, nil
}

// alive reports whether the process the record names still runs.
func (r launcherRecord) alive() bool {
	t, err := procStartTime(r.Pid)
	return err == nil && t == r.Start
}
