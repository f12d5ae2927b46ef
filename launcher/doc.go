// Package launcher is gorun's job runtime: Run starts the N ranks of a job
// on this machine, forwards their I/O and signals, applies the exit rules,
// and removes everything the job made. Its counterpart inside the ranks
// (environment, lifeline, Abort record) is package jobenv, so that rank
// programs do not link the launcher.
//
// A job's life (Run):
//  1. Resolve the MCA parameters once (mca.Resolve); a bad value, or values
//     that cannot work together (a component's mca.Rule, or a btl selection
//     that cannot reach -np ranks: checkBTLs), end the run with ExitUsage
//     before anything starts.
//  2. Check the per-user directory $TMPDIR/gorun-<uid> (a real directory,
//     ours, not writable by others), remove the session directories of
//     launchers that are gone, and create <jobid>/ (mode 0700) holding a
//     "launcher" record: our pid and start time, so pid reuse is noticed.
//  3. Build PROGRAM if it is a Go package or file (go build -o into the
//     session directory).
//  4. Spawn the ranks from one goroutine locked to its OS thread, each in
//     its own process group, with Pdeathsig SIGKILL and the read end of the
//     lifeline pipe as fd 3; their output is forwarded line by line.
//  5. Wait: an event loop feeds the exit rules (jobState, a state machine
//     tested without processes) and carries out the actions they return.
//     The first rank that fails (a non-zero status, or status 0 after
//     Init without Finalize: exit 1, as Open MPI), a SIGINT/SIGTERM/SIGHUP,
//     or the timeout decides the status; every other rank then gets SIGTERM (the
//     forwarded signal, SIGQUIT on a timeout) and SIGKILL 2 s later.
//     gorun says why on stderr in one line: the failing rank and how it
//     ended, "job interrupted by SIGINT", or "job timed out after D".
//  6. Remove the session directory, the job's shared-memory files, and the
//     per-user directory when it is empty.
//
// Invariants:
//   - Run returns only after every rank it started has been reaped.
//   - Each output line is written in one piece: lines of different ranks
//     never interleave (up to lines of 64 KiB).
//   - Only the first failure is reported; ranks that end because gorun
//     stopped them are not.
//   - When gorun dies, even by SIGKILL, every rank ends: the lifeline's
//     end-of-file (jobenv.Watch) and Pdeathsig, both; so does a `go build`
//     it started (Pdeathsig, from a thread that lives as long as the
//     build). The janitor (janitor.go), a gorun process in a session of its
//     own started with the session, then kills what lingers and removes the
//     session directory and the shared-memory files.
//   - A closed stdout or stderr (`gorun ... | head`) does not end the job:
//     its output is discarded from then on, as Open MPI does.
//
// Across machines (Options.Hosts names a host other than this machine):
// gorun starts one helper per host (remote.go: through the launch agent
// plm_ssh_agent, or directly on this machine; helper.go: `gorun
// --remote-helper`), places the ranks by slots (hosts.go), serves their
// PMI-2 wire-up (pmi.Server, relayed by the helpers), and applies the same
// exit, signal, output and cleanup rules; each helper makes and removes its
// host's session directory. A job on this machine only is unchanged.
//
// Session files: "launcher" (this package), "abort.<rank>" (jobenv.Abort),
// "finalized.<rank>" (jobenv.RecordFinalize, at gorun.Finalize: the
// rank's card renamed), the
// rndv package's cards and segment descriptor, and "gone.<rank>"
// (rndv.PublishGone), written when a rank exits 0 without a card so that
// the ranks waiting for it in Init fail at once. The shared-memory file of a
// job is <dir>/gorun-<uid>-<jobid>-<random>.seg, dir being /dev/shm or
// btl_sm_backing_directory; only regular files of the user are removed.
package launcher
