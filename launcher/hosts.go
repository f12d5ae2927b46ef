package launcher

// Hosts of a multi-host job (--host, --hostfile) and the placement of ranks
// on them.

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Host is one entry of --host or --hostfile.
type Host struct {
	Name  string // as the user wrote it
	Slots int    // ranks to place on it per pass; 0: its core count
}

// maxSlots bounds a slots count (the job itself is bounded by MaxNP).
const maxSlots = MaxNP

// ParseHosts reads the value of --host: comma-separated HOST or HOST:SLOTS.
func ParseHosts(list string) ([]Host, error) {
	var hosts []Host
	for _, item := range strings.Split(list, ",") {
		name, slots, hasSlots := strings.Cut(item, ":")
		h := Host{Name: name}
		if err := checkHostName(name); err != nil {
			return nil, fmt.Errorf("--host %q: %v", clip(list), err)
		}
		if hasSlots {
			n, err := parseSlots(slots)
			if err != nil {
				return nil, fmt.Errorf("--host %q: host %s: %v", clip(list), name, err)
			}
			h.Slots = n
		}
		hosts = append(hosts, h)
	}
	if err := checkDuplicates(hosts); err != nil {
		return nil, fmt.Errorf("--host %q: %v", clip(list), err)
	}
	return hosts, nil
}

// ParseHostfile reads a host file: one "HOST [slots=N]" per line; '#'
// starts a comment; blank lines are ignored. Errors name file:line.
func ParseHostfile(file string, data []byte) ([]Host, error) {
	var hosts []Host
	seen := map[string]bool{} // lower-case names: host names are case-insensitive
	for i, line := range strings.Split(string(data), "\n") {
		where := file + ":" + strconv.Itoa(i+1)
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		h := Host{Name: fields[0]}
		if err := checkHostName(h.Name); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		for _, f := range fields[1:] {
			v, ok := strings.CutPrefix(f, "slots=")
			if !ok {
				return nil, fmt.Errorf("%s: %q after the host name; want \"HOST [slots=N]\"", where, clip(f))
			}
			n, err := parseSlots(v)
			if err != nil {
				return nil, fmt.Errorf("%s: host %s: %v", where, h.Name, err)
			}
			h.Slots = n
		}
		if len(fields) > 2 {
			return nil, fmt.Errorf("%s: %d words; want \"HOST [slots=N]\"", where, len(fields))
		}
		if seen[strings.ToLower(h.Name)] {
			return nil, fmt.Errorf("%s: host %s named twice (give it one line with slots=N)", where, h.Name)
		}
		seen[strings.ToLower(h.Name)] = true
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: no host in the file (want lines \"HOST [slots=N]\")", file)
	}
	return hosts, nil
}

func parseSlots(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxSlots || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("slots %q: want a positive integer (1..%d)", clip(s), maxSlots)
	}
	return n, nil
}

// checkHostName accepts host names and IP addresses: letters, digits, '-',
// '.', '_' (and ':' inside nothing: IPv6 addresses are not supported in
// --host, whose ':' separates the slots).
func checkHostName(s string) error {
	if s == "" {
		return fmt.Errorf("empty host name")
	}
	if len(s) > 253 {
		return fmt.Errorf("host name %.20q...: longer than 253 characters", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("host name %q: character %q; allowed: letters, digits, '-', '.', '_'", s, c)
		}
	}
	if s[0] == '-' {
		return fmt.Errorf("host name %q: must not start with '-'", s)
	}
	return nil
}

// checkDuplicates refuses a host named twice (names are case-insensitive).
func checkDuplicates(hosts []Host) error {
	seen := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		if seen[strings.ToLower(h.Name)] {
			return fmt.Errorf("host %s named twice (name it once, with :SLOTS)", h.Name)
		}
		seen[strings.ToLower(h.Name)] = true
	}
	return nil
}

// localNames is what "this machine" answers to: localhost, its host name
// (and the name's first label), and the addresses of its interfaces.
type localNames struct {
	names map[string]bool
}

func newLocalNames() localNames {
	l := localNames{names: map[string]bool{"localhost": true, "localhost.localdomain": true}}
	if h, err := os.Hostname(); err == nil && h != "" {
		l.names[strings.ToLower(h)] = true
		short, _, _ := strings.Cut(h, ".")
		l.names[strings.ToLower(short)] = true
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				l.names[ipn.IP.String()] = true
			}
		}
	}
	return l
}

// isLocal reports whether name means this machine (no agent needed).
func (l localNames) isLocal(name string) bool {
	n := strings.ToLower(name)
	if l.names[n] {
		return true
	}
	ip := net.ParseIP(n)
	return ip != nil && ip.IsLoopback()
}

// placeRanks returns how many of np ranks each host gets, given each
// host's slots (all ≥ 1): passes over the hosts in order, each pass giving
// every host up to its slots, until np ranks are placed. With np ≤ the
// total slots this is "fill each host's slots in order"; above it, every
// host gets its slots again in the next pass. Ranks are then numbered in
// blocks, host by host (see rankBlocks).
func placeRanks(np int, slots []int) []int {
	counts := make([]int, len(slots))
	for left := np; left > 0; {
		for i, s := range slots {
			n := min(s, left)
			counts[i] += n
			left -= n
		}
	}
	return counts
}

// rankBlocks turns per-host counts into each host's first rank.
func rankBlocks(counts []int) []int {
	first := make([]int, len(counts))
	next := 0
	for i, c := range counts {
		first[i] = next
		next += c
	}
	return first
}

// processMapping is PMI_process_mapping for ranks placed in blocks:
// "(vector,(node,count,ranks),...)", one triple per run of consecutive
// nodes with the same number of ranks; nodes are numbered in host order
// among the hosts that have ranks.
func processMapping(counts []int) string {
	var b strings.Builder
	b.WriteString("(vector")
	node := 0
	for i := 0; i < len(counts); {
		if counts[i] == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(counts) && counts[j] == counts[i] {
			j++
		}
		fmt.Fprintf(&b, ",(%d,%d,%d)", node, j-i, counts[i])
		node += j - i
		i = j
	}
	b.WriteString(")")
	return b.String()
}

// remoteHosts returns the hosts that are not this machine.
func remoteHosts(hosts []Host) []Host {
	if len(hosts) == 0 {
		return nil
	}
	l := newLocalNames()
	var remote []Host
	for _, h := range hosts {
		if !l.isLocal(h.Name) {
			remote = append(remote, h)
		}
	}
	return remote
}
