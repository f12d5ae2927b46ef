// Command soak is the long-running randomized traffic test of gorun (issue
// 6): 4 ranks (any number works) exchange random messages for -duration and
// check every one of them. Run it under the launcher:
//
//	gorun -np 4 soak -duration 10m -seed 1
//	gorun -np 4 --mca pml_ob1_rget_limit 256k --mca pml_ob1_rget_max 0 soak -duration 5m
//
// The job runs in rounds. In each round every rank draws, from its own seeded
// generator, a list of messages for every peer (itself included) on two
// communicators (the world and a Dup of it), with sizes from 0 to 4 MiB
// (mostly small, many at the eager, fragment and single-copy boundaries, a
// few large), tags from a small set and one of Send, Ssend, Isend, Issend.
// A small all-to-all of plans on the world (tag ctrlTag) tells each receiver
// how many messages of which size and tag come from each peer; then each
// rank sends from one goroutine per communicator while it receives with a
// strategy drawn for the round (Irecv+WaitAll/WaitAny/Test, one blocking
// receiver goroutine per source, Probe or Iprobe on AnySource then Recv,
// Recv on AnySource/AnyTag, Irecv on AnySource), and a third communicator
// carries Sendrecv shifts. A Barrier ends the round.
//
// Invariants checked, each a failure (exit 1, "soak FAIL" on stderr) when
// broken:
//   - every message of at least hdrLen bytes carries a header (source,
//     destination, communicator, tag, round, per-(comm,src,dst) sequence
//     number, payload length, CRC-32C of the payload) that must agree with
//     the Status and the payload (else: corrupted);
//   - the sequence numbers from one source on one communicator arrive
//     consecutively (a smaller one: duplicated; a larger one: lost or
//     overtaken); shorter messages carry a pattern checked byte by byte and
//     are counted per round;
//   - at the end every rank sends each peer its sent counts and bytes, which
//     must equal what that peer received (else: lost or duplicated);
//   - memory after warm-up and at the end (after a forced GC) must not grow:
//     live memory (the Go runtime's count of heap objects and goroutine
//     stacks) by more than -mem-growth percent (and 4 MiB: the runtime's
//     free lists, bounded to about 2.5 MiB, fill up over a run),
//     RssAnon (all of the rank's private memory) by more than 50% and 32 MiB.
//     RssAnon is only a loose guard against leaks outside the Go heap: it
//     moves by megabytes, up and back down, with how the kernel backs freed
//     and reused pages (transparent huge pages). VmRSS is no measure at all:
//     it counts the shared segment's pages, which a rank touches lazily as
//     fragment pools, fast boxes and pipeline buffers come into use, up to
//     the segment's fixed size; that is growth without a leak.
//
// The protocol cannot deadlock: every receive strategy either has all its
// receives posted or a receiver per source that consumes in send order, or
// accepts any source, so every blocking send is eventually matched. A round
// that takes longer than -stall prints what each receiver still waits for and
// fails. Rank 0 decides when to stop (so all ranks agree), prints a progress
// line every -progress with every rank's memory after a forced GC, and ends with
//
//	soak ok: msgs=N bytes=B lost=0 corrupted=0 duplicated=0 live/anon_start=.. live/anon_end=..
package main
