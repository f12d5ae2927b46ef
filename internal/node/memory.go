package node

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Memory is the memory this process's machine gives it: the machine's
// RAM (sysinfo), or less when a control group this process is in (v2
// memory.max, v1 memory.limit_in_bytes, its own or an ancestor's) limits
// it. 0 when neither can be read.
func Memory() int64 { return memory() }

var memory = sync.OnceValue(func() int64 {
	var si unix.Sysinfo_t
	total := int64(0)
	if unix.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return total
	}
	defer f.Close()
	return min0(total, cgroupLimit(f, os.DirFS("/sys/fs/cgroup")))
})

// min0 is the lesser of a and b, where 0 means "unknown".
func min0(a, b int64) int64 {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// cgroupLimit is the least memory limit of the control groups listed in
// self (the text of /proc/self/cgroup) and their ancestors, read from
// root (/sys/fs/cgroup): memory.max under the v2 hierarchy's path,
// memory/<path>/memory.limit_in_bytes for a v1 memory controller. 0: none.
func cgroupLimit(self io.Reader, root fs.FS) int64 {
	var least int64
	sc := bufio.NewScanner(self)
	for sc.Scan() {
		v2, memCtl, p, ok := parseCgroupLine(sc.Text())
		if !ok {
			continue
		}
		var dir, file string
		switch {
		case v2:
			dir, file = p, "memory.max"
		case memCtl:
			dir, file = path.Join("memory", p), "memory.limit_in_bytes"
		default:
			continue
		}
		for d := dir; ; d = path.Dir(d) {
			if b, err := fs.ReadFile(root, strings.TrimPrefix(path.Join(d, file), "/")); err == nil {
				if n, ok := parseLimit(string(b)); ok {
					least = min0(least, n)
				}
			}
			if d == "/" || d == "memory" { // the hierarchy's root, read above
				break
			}
		}
	}
	return least
}

// parseCgroupLine reads one line of /proc/self/cgroup, "id:controllers:path":
// v2 for the unified hierarchy ("0::/path"), memCtl when a v1 line's
// controllers include memory.
func parseCgroupLine(line string) (v2, memCtl bool, p string, ok bool) {
	id, rest, ok1 := strings.Cut(line, ":")
	ctls, p, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || !strings.HasPrefix(p, "/") {
		return false, false, "", false
	}
	if id == "0" && ctls == "" {
		return true, false, path.Clean(p), true
	}
	for _, c := range strings.Split(ctls, ",") {
		if c == "memory" {
			return false, true, path.Clean(p), true
		}
	}
	return false, false, path.Clean(p), true
}

// parseLimit reads a memory limit file: a byte count, or "max" (v2) for
// none; v1's "no limit" is a count near 2^63, which the caller's minimum
// with the machine's RAM takes care of. ok is false for anything else.
func parseLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
