package gorun

// The wire-up across machines: TCP addresses in the business cards, the
// job secret that authenticates the TCP connections, and jobs started
// through PMI (srun --mpi=pmi2, mpiexec.hydra, gorun across hosts) instead
// of gorun's session directory.

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/tcp"
	"github.com/gorun-mpi/gorun/internal/node"
	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/pmi"
)

// netWiring is the part of wiring that the network wire-up fills.
type netWiring struct {
	pmi    *pmi.Client // the PMI connection of a PMI job, nil otherwise
	nodes  []int       // node index of each rank; nil: all on this machine
	tcp    *tcp.Module // listening (before Connect), when some peer needs TCP
	reach  []bool      // the peers TCP carries
	addrs  []string    // every rank's TCP address ("" when it has none)
	secret []byte      // the job's secret for TCP
	pids   []int       // every rank's pid (PMI jobs)

	// Under gorun across hosts (PMI_FD and GORUN_* both set): this host's
	// session directory and job id, made and removed by gorun's helper
	// there; the shared segment's rendezvous goes in it ("" otherwise).
	hostSession, hostJobID string
}

// secretFile holds the TCP secret of a job started by gorun on one
// machine, in its session directory (written by rank 0 before its card).
const secretFile = "tcp.secret"

// pmiKVS keys.
const (
	pmiSecretKey = "gorun-tcp-secret"
	pmiCardKey   = "gorun-card-"
)

// lookupPMI reports whether this process was started with a PMI channel
// (PMI_FD); it refuses a multi-task srun step without one, which has no
// way to exchange business cards.
func lookupPMI() (pmi.Env, bool, error) {
	e, err := pmi.LookupEnv()
	if errors.Is(err, pmi.ErrNoPMI) {
		if os.Getenv("SLURM_STEP_ID") != "" && os.Getenv(jobenv.EnvRank) == "" {
			if n, _ := strconv.Atoi(os.Getenv("SLURM_NTASKS")); n > 1 {
				return e, false, fmt.Errorf("gorun: started by srun without PMI (SLURM_NTASKS=%d, no PMI_FD): use srun --mpi=pmi2", n)
			}
		}
		return e, false, nil
	}
	return e, err == nil, err
}

// readPMIJob connects to the PMI server and returns the job it describes.
func readPMIJob(e pmi.Env, timeout time.Duration) (*pmi.Client, jobenv.Job, error) {
	c, err := pmi.Dial(e, timeout)
	if err != nil {
		return nil, jobenv.Job{}, fmt.Errorf("gorun: wire-up through PMI (PMI_FD=%d): %w", e.FD, err)
	}
	return c, jobenv.Job{Rank: c.Rank, Size: c.Size, JobID: c.JobID}, nil
}

// tcpReach is the peers the tcp BTL carries, nil when none: with tcp
// selected, every rank on another machine, and the ranks on this one too
// when sm is not selected.
func (w *wiring) tcpReach() []bool {
	if !w.rt.BTL.Has("tcp") || w.job.Size < 2 {
		return nil
	}
	reach := make([]bool, w.job.Size)
	any := false
	for p := range reach {
		if p == w.job.Rank {
			continue
		}
		remote := w.nodes != nil && w.nodes[p] != w.nodes[w.job.Rank]
		if remote || !w.rt.BTL.Has("sm") {
			reach[p], any = true, true
		}
	}
	if !any {
		return nil
	}
	return reach
}

// localRanks is the world ranks on this rank's machine, in rank order.
func (w *wiring) localRanks() []int {
	if w.nodes == nil {
		all := make([]int, w.job.Size)
		for i := range all {
			all[i] = i
		}
		return all
	}
	var l []int
	for r, n := range w.nodes {
		if n == w.nodes[w.job.Rank] {
			l = append(l, r)
		}
	}
	return l
}

// listenTCP opens the tcp module when some peer needs it, before the card
// that carries its address is published.
func (w *wiring) listenTCP() error {
	w.reach = w.tcpReach()
	if w.reach == nil {
		return nil
	}
	cfg, err := tcp.ConfigFrom(w.params)
	if err != nil {
		return err
	}
	cfg.Loopback = allSame(w.nodes) // every rank on this machine
	m, err := tcp.Listen(tcp.Job{Rank: w.job.Rank, Size: w.job.Size, Reach: w.reach}, cfg, mca.Logger(w.params, "btl"))
	if err != nil {
		return err
	}
	w.tcp = m
	return nil
}

func allSame(xs []int) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// gorunSecret makes (rank 0) or reads (others, after the cards) the TCP
// secret of a job started by gorun on one machine.
func (w *wiring) writeGorunSecret() error {
	if w.tcp == nil || w.job.Rank != 0 {
		return nil
	}
	w.secret = tcp.NewSecret()
	path := filepath.Join(w.job.SessionDir, secretFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(w.secret)), 0o600); err != nil {
		return fmt.Errorf("gorun: writing the job's TCP secret: %w", err)
	}
	return os.Rename(tmp, path)
}

func (w *wiring) readGorunSecret() error {
	if w.tcp == nil || w.secret != nil {
		return nil
	}
	path := filepath.Join(w.job.SessionDir, secretFile)
	data, err := os.ReadFile(path)
	if err == nil {
		w.secret, err = hex.DecodeString(strings.TrimSpace(string(data)))
	}
	if err != nil || len(w.secret) < tcp.MinSecret {
		return fmt.Errorf("gorun: reading the job's TCP secret %s: malformed or missing (%v)", path, err)
	}
	return nil
}

// pmiCard is a rank's business card in the PMI key-value space:
// "HOST,ADDR,PID" (ADDR empty when the rank has no TCP address).
func formatPMICard(host, addr string, pid int) string {
	return host + "," + addr + "," + strconv.Itoa(pid)
}

func parsePMICard(s string) (host, addr string, pid int, err error) {
	f := strings.Split(s, ",")
	if len(f) != 3 || f[0] == "" {
		return "", "", 0, fmt.Errorf("business card %q; want HOST,ADDR,PID", s)
	}
	pid, err = strconv.Atoi(f[2])
	if err != nil || pid < 1 {
		return "", "", 0, fmt.Errorf("business card %q: pid %q is not a positive integer", s, f[2])
	}
	return f[0], f[1], pid, nil
}

// wireUpPMI is wireUp for a PMI job: node placement from
// PMI_process_mapping, TCP listen, card and secret put, one fence, every
// card read (node placement from the cards' host names when the mapping
// is missing).
func (w *wiring) wireUpPMI() error {
	c := w.pmi
	host := node.Name()
	if v, found, err := c.JobAttr("PMI_process_mapping"); err != nil {
		return err
	} else if found {
		if w.nodes, err = pmi.ParseProcessMapping(v, w.job.Size); err != nil {
			w.nodes = nil
		}
	}
	mappingKnown := w.nodes != nil
	if !mappingKnown {
		// Placement unknown until the cards are read: a rank may be
		// remote, so listen for every peer.
		w.nodes = make([]int, w.job.Size)
		for i := range w.nodes {
			w.nodes[i] = i
		}
	}
	if err := w.listenTCP(); err != nil {
		return err
	}
	addr := ""
	if w.tcp != nil {
		addr = w.tcp.Addr()
	}
	if w.job.Rank == 0 && w.rt.BTL.Has("tcp") && w.job.Size > 1 {
		w.secret = tcp.NewSecret()
		if err := c.Put(pmiSecretKey, hex.EncodeToString(w.secret)); err != nil {
			return err
		}
	}
	if err := c.Put(pmiCardKey+strconv.Itoa(w.job.Rank), formatPMICard(host, addr, os.Getpid())); err != nil {
		return err
	}
	if err := c.Fence(); err != nil {
		return err
	}
	w.addrs, w.pids = make([]string, w.job.Size), make([]int, w.job.Size)
	hosts := make([]string, w.job.Size)
	for r := 0; r < w.job.Size; r++ {
		v, found, err := c.Get(pmiCardKey + strconv.Itoa(r))
		if err == nil && !found {
			err = errors.New("not found")
		}
		if err != nil {
			return fmt.Errorf("gorun: reading rank %d's business card from PMI: %w", r, err)
		}
		h, a, pid, err := parsePMICard(v)
		if err != nil {
			return fmt.Errorf("gorun: rank %d's %v", r, err)
		}
		hosts[r], w.addrs[r], w.pids[r] = h, a, pid
	}
	if !mappingKnown {
		byHost := map[string]int{}
		for r, h := range hosts {
			if _, ok := byHost[h]; !ok {
				byHost[h] = len(byHost)
			}
			w.nodes[r] = byHost[h]
		}
	}
	if w.tcp != nil && w.secret == nil {
		v, found, err := c.Get(pmiSecretKey)
		if err == nil && !found {
			err = errors.New("rank 0 put none")
		}
		if err != nil {
			return fmt.Errorf("gorun: reading the job's TCP secret from PMI: %w", err)
		}
		if w.secret, err = hex.DecodeString(v); err != nil || len(w.secret) < tcp.MinSecret {
			return fmt.Errorf("gorun: the job's TCP secret from PMI is malformed")
		}
	}
	return nil
}

// openTCP connects the tcp module opened by the wire-up to its peers.
func openTCP(w *wiring) (btl.Module, error) {
	if w.tcp == nil {
		return nil, nil
	}
	m := w.tcp
	w.tcp = nil // owned by w.mods from here on
	if err := m.SetSecret(w.secret); err != nil {
		m.Close()
		return nil, err
	}
	addrs := w.addrs
	if addrs == nil {
		addrs = make([]string, w.job.Size)
		for i, c := range w.cards {
			addrs[i] = c.Addr
		}
	}
	if err := m.Connect(addrs); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// pmiSessionDir is the node-local session directory of a PMI job whose
// ranks share this machine: $TMPDIR/gorun-pmi-<uid>-<job id>. Every local
// rank creates it if needed; local rank 0 removes it once the shared
// segment is set up (see openSM).
func pmiSessionDir(jobID string) string {
	id := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, jobID)
	return filepath.Join(os.TempDir(), "gorun-pmi-"+strconv.Itoa(os.Getuid())+"-"+id)
}
