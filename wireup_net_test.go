package gorun

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/mca"
)

func TestPMICard(t *testing.T) {
	s := formatPMICard("h1", "10.77.0.1:4242", 77)
	host, addr, pid, err := parsePMICard(s)
	if err != nil || host != "h1" || addr != "10.77.0.1:4242" || pid != 77 {
		t.Errorf("parsePMICard(%q) = %q, %q, %d, %v", s, host, addr, pid, err)
	}
	if _, addr, _, err := parsePMICard("h1,,5"); err != nil || addr != "" {
		t.Errorf("a card without a TCP address: %q, %v", addr, err)
	}
	for _, bad := range []string{"", "h1", "h1,a", ",a,1", "h1,a,0", "h1,a,x", "h1,a,1,2"} {
		if _, _, _, err := parsePMICard(bad); err == nil {
			t.Errorf("parsePMICard(%q) accepted it", bad)
		}
	}
}

func FuzzPMICard(f *testing.F) {
	f.Add("h1,10.77.0.1:4242,77")
	f.Add("h1,,5")
	f.Fuzz(func(t *testing.T, s string) {
		host, addr, pid, err := parsePMICard(s)
		if err != nil {
			return
		}
		if again := formatPMICard(host, addr, pid); strings.Count(again, ",") != 2 || host == "" || pid < 1 {
			t.Fatalf("parsePMICard(%q) = %q, %q, %d", s, host, addr, pid)
		}
	})
}

func TestPMISessionDir(t *testing.T) {
	t.Setenv("TMPDIR", "/scratch")
	d := pmiSessionDir("12.0")
	if !strings.HasPrefix(d, "/scratch/gorun-pmi-") || !strings.HasSuffix(d, "-12.0") {
		t.Errorf("pmiSessionDir(12.0) = %q", d)
	}
	if d := pmiSessionDir("../x/y z"); strings.Count(d, "/") != 2 || strings.Contains(d, " ") {
		t.Errorf("pmiSessionDir of a hostile id = %q; want one plain name under $TMPDIR", d)
	}
}

// TestTCPReach: which peers TCP carries, by placement and selection.
func TestTCPReach(t *testing.T) {
	tests := []struct {
		btl   string
		rank  int
		nodes []int
		want  []bool
		local []int
	}{
		// gorun on one machine: sm carries everyone unless deselected.
		{"self,sm,tcp", 1, nil, nil, []int{0, 1, 2}},
		{"self,tcp", 1, nil, []bool{true, false, true}, []int{0, 1, 2}},
		{"self,sm", 1, []int{0, 1, 1}, nil, []int{1, 2}},
		// Two machines: TCP to the other one only, or to all without sm.
		{"self,sm,tcp", 0, []int{0, 0, 1, 1}, []bool{false, false, true, true}, []int{0, 1}},
		{"self,tcp", 0, []int{0, 0, 1, 1}, []bool{false, true, true, true}, []int{0, 1}},
		{"self,sm,tcp", 3, []int{0, 1, 0, 1}, []bool{true, false, true, false}, []int{1, 3}},
	}
	for _, tt := range tests {
		p, _, err := mca.Resolve(mca.Inputs{Flags: [][2]string{{"btl", tt.btl}}})
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtimeParams.Config(p)
		if err != nil {
			t.Fatal(err)
		}
		size := 3
		if tt.nodes != nil {
			size = len(tt.nodes)
		}
		w := &wiring{job: jobenv.Job{Rank: tt.rank, Size: size}, rt: rt, params: p}
		w.nodes = tt.nodes
		if got := w.tcpReach(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("btl=%s rank %d nodes %v: tcpReach = %v; want %v", tt.btl, tt.rank, tt.nodes, got, tt.want)
		}
		if got := w.localRanks(); !reflect.DeepEqual(got, tt.local) {
			t.Errorf("btl=%s rank %d nodes %v: localRanks = %v; want %v", tt.btl, tt.rank, tt.nodes, got, tt.local)
		}
	}
}
