/*
 * bench.c - OSU-style MPI point-to-point micro-benchmarks (own code, follows the
 * methodology of the OSU Micro-Benchmarks 5.x/7.x, which Debian does not package).
 *
 * Usage: mpirun -np 2 ./bench MODE [maxsize]
 *   MODE = lat   : osu_latency   ping-pong, blocking MPI_Send/MPI_Recv, reports half round trip (us)
 *                  sizes 0,1,2,4..max; 10000 iters + 100 warmup (<=8 KiB), 1000 iters + 10 warmup (>8 KiB)
 *          bw    : osu_bw        rank0 posts window=64 MPI_Isend, Waitall, waits for 4-byte ack from rank1;
 *                  rank1 posts 64 MPI_Irecv, Waitall, sends ack. OSU times 100 windows + 10 warmup (<=8 KiB),
 *                  20 + 2 (>8 KiB); here 1000 + 100 and 100 + 10 by default (OSU_EXACT=1 gives OSU's counts),
 *                  because OSU's counts last well under 1 ms for small sizes on this machine (too noisy)
 *                  MB/s = size*window*iters/1e6/elapsed (OSU's MB = 10^6 B)
 *          bibw  : osu_bibw      both ranks post 64 Irecv + 64 Isend, Waitall; same iteration counts; counts both directions
 *          mr    : osu_mbw_mr    1 pair; sender 64 Isend + Waitall + recv ack; receiver 64 Irecv + Waitall + send ack;
 *                  reports MB/s and messages/s; same iteration counts as bw (for 1 pair the
 *                  osu_mbw_mr loop is the osu_bw loop; this mode only adds the messages/s column)
 *          ring  : token ring over all ranks: rank0 sends 8 B to rank1 and waits for it from rank np-1,
 *                  every other rank receives from rank-1 and sends to rank+1; 10000 rounds (argv[2] overrides)
 *          shift : every rank does MPI_Sendrecv(8 B to rank+1, from rank-1); 10000 rounds (argv[2] overrides)
 *          allreduce, reduce, bcast, allgather, alltoall : osu_<name> (any np): per size, warm-up, then
 *                  iters x (t = Wtime; collective; timer += Wtime - t; MPI_Barrier), iters 1000 (<=8 KiB) or 100,
 *                  warm-up 100 or 10; prints the average latency over ranks (us). size = bytes per rank
 *                  (allreduce/reduce: MPI_FLOAT sum of size/4 elements, sizes 4..max; allgather/alltoall:
 *                  size bytes per rank-pair block, max 1 MiB by default; bcast/reduce: root 0)
 *          barrier : osu_barrier: 10000 barriers (argv[2] overrides), prints "barrier us_per_round=<avg us>"
 *   maxsize (default 4 MiB) may be raised; sizes above 4 MiB use 100+2 ping-pongs (lat) or 10+1 windows (bw).
 *   Buffers are page aligned and touched before use (as OSU does).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEFAULT (4 * 1024 * 1024)
#define LARGE 8192
#define HUGE (4 * 1024 * 1024) /* beyond OSU's default range: fewer iterations (see usage) */
#define WINDOW 64

static int rank, np, osu_exact;
static char *sbuf, *rbuf;

static char *alloc_buf(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), n ? n : 1) != 0) {
        fprintf(stderr, "alloc failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, rank == 0 ? 'a' : 'b', n ? n : 1);
    return p;
}

static void lat(long max) {
    if (rank == 0) printf("# OSU-style MPI Latency Test (own implementation)\n# %-10s %18s\n", "Size", "Latency (us)");
    for (long size = 0; size <= max; size = size ? size * 2 : 1) {
        int iters = size > HUGE ? 100 : size > LARGE ? 1000 : 10000;
        int skip = size > HUGE ? 2 : size > LARGE ? 10 : 100;
        double t0 = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < iters + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            double t = MPI_Wtime() - t0;
            printf("%-12ld %18.2f\n", size, t * 1e6 / (2.0 * iters));
            fflush(stdout);
        } else if (rank == 1) {
            for (int i = 0; i < iters + skip; i++) {
                MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
}

static void bw(long max, int bidir, int mr) {
    MPI_Request req[2 * WINDOW];
    if (rank == 0) {
        if (mr)
            printf("# OSU-style MPI Multiple Bandwidth / Message Rate Test, 1 pair, window %d (own implementation)\n# %-10s %14s %18s\n",
                   WINDOW, "Size", "MB/s", "Messages/s");
        else
            printf("# OSU-style MPI %s Test, window %d (own implementation)\n# %-10s %18s\n",
                   bidir ? "Bi-Directional Bandwidth" : "Bandwidth", WINDOW, "Size", "Bandwidth (MB/s)");
    }
    for (long size = 1; size <= max; size *= 2) {
        /* OSU defaults are 100+10 (<=8 KiB) and 20+2 (>8 KiB) windows; that is well under a millisecond
           for small sizes on this machine, so by default 10x / 5x more windows are timed (OSU_EXACT=1 restores them). */
        int iters = size > HUGE ? 10 : size > LARGE ? (osu_exact ? 20 : 100) : (osu_exact ? 100 : 1000);
        int skip = size > HUGE ? 1 : size > LARGE ? (osu_exact ? 2 : 10) : (osu_exact ? 10 : 100);
        double t0 = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < iters + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                if (bidir) {
                    for (int j = 0; j < WINDOW; j++)
                        MPI_Irecv(rbuf, (int)size, MPI_CHAR, 1, 10, MPI_COMM_WORLD, &req[WINDOW + j]);
                    for (int j = 0; j < WINDOW; j++)
                        MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[j]);
                    MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
                } else {
                    for (int j = 0; j < WINDOW; j++)
                        MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[j]);
                    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                    MPI_Recv(rbuf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            }
            double t = MPI_Wtime() - t0;
            double bytes = (double)size * WINDOW * iters * (bidir ? 2 : 1);
            if (mr)
                printf("%-12ld %14.2f %18.2f\n", size, bytes / 1e6 / t, (double)WINDOW * iters / t);
            else
                printf("%-12ld %18.2f\n", size, bytes / 1e6 / t);
            fflush(stdout);
        } else if (rank == 1) {
            for (int i = 0; i < iters + skip; i++) {
                if (bidir) {
                    for (int j = 0; j < WINDOW; j++)
                        MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[WINDOW + j]);
                    for (int j = 0; j < WINDOW; j++)
                        MPI_Isend(sbuf, (int)size, MPI_CHAR, 0, 10, MPI_COMM_WORLD, &req[j]);
                    MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
                } else {
                    for (int j = 0; j < WINDOW; j++)
                        MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[j]);
                    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                    MPI_Send(sbuf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
                }
            }
        }
    }
}

static void ring(long rounds, int shift) {
    char s[8] = {0}, r[8];
    int right = (rank + 1) % np, left = (rank + np - 1) % np;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < rounds; i++) {
        if (shift) {
            MPI_Sendrecv(s, 8, MPI_CHAR, right, 7, r, 8, MPI_CHAR, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Send(s, 8, MPI_CHAR, right, 7, MPI_COMM_WORLD);
            MPI_Recv(r, 8, MPI_CHAR, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, 8, MPI_CHAR, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s, 8, MPI_CHAR, right, 7, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s np=%d rounds=%ld total_s=%.4f us_per_round=%.3f us_per_hop=%.3f\n", shift ? "shift" : "ring", np,
               rounds, tmax, tmax * 1e6 / rounds, shift ? tmax * 1e6 / rounds : tmax * 1e6 / ((double)rounds * np));
}

static void coll(const char *mode, long max) {
    int is_ar = !strcmp(mode, "allreduce"), is_red = !strcmp(mode, "reduce"), is_bc = !strcmp(mode, "bcast");
    int is_ag = !strcmp(mode, "allgather"), is_a2a = !strcmp(mode, "alltoall");
    if (rank == 0) printf("# OSU-style MPI %s Latency Test (own implementation), np=%d\n# %-10s %18s\n", mode, np, "Size", "Avg Latency (us)");
    long start = (is_ar || is_red) ? 4 : 1;
    for (long size = start; size <= max; size *= 2) {
        int iters = size > LARGE ? 100 : 1000, skip = size > LARGE ? 10 : 100;
        double timer = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            if (is_ar) MPI_Allreduce(sbuf, rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else if (is_red) MPI_Reduce(sbuf, rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
            else if (is_bc) MPI_Bcast(sbuf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
            else if (is_ag) MPI_Allgather(sbuf, (int)size, MPI_CHAR, rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            else if (is_a2a) MPI_Alltoall(sbuf, (int)size, MPI_CHAR, rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            double t = MPI_Wtime() - t0;
            if (i >= skip) timer += t;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        double lat = timer * 1e6 / iters, sum;
        MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) { printf("%-12ld %18.2f\n", size, sum / np); fflush(stdout); }
    }
}

static void barrier(long rounds) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < rounds; i++) MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("barrier np=%d rounds=%ld total_s=%.4f us_per_round=%.3f\n", np, rounds, tmax, tmax * 1e6 / rounds);
}

int main(int argc, char **argv) {
    { int prov; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov); if (prov != MPI_THREAD_MULTIPLE) { fprintf(stderr, "no MULTIPLE\n"); } }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *mode = argc > 1 ? argv[1] : "lat";
    osu_exact = getenv("OSU_EXACT") && atoi(getenv("OSU_EXACT")) != 0;
    long arg = argc > 2 ? atol(argv[2]) : 0;
    int is_ring = !strcmp(mode, "ring") || !strcmp(mode, "shift") || !strcmp(mode, "barrier");
    int is_coll = !strcmp(mode, "allreduce") || !strcmp(mode, "reduce") || !strcmp(mode, "bcast") ||
                  !strcmp(mode, "allgather") || !strcmp(mode, "alltoall");
    if (!is_ring && !is_coll && np != 2) {
        if (rank == 0) fprintf(stderr, "mode %s needs exactly 2 ranks\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long max = arg ? arg : ((!strcmp(mode, "allgather") || !strcmp(mode, "alltoall")) ? 1024 * 1024 : MAX_DEFAULT);
    if (!is_ring) {
        size_t n = (size_t)max * ((!strcmp(mode, "allgather") || !strcmp(mode, "alltoall")) ? (size_t)np : 1);
        sbuf = alloc_buf(n);
        rbuf = alloc_buf(n);
    }
    if (!strcmp(mode, "lat")) lat(max);
    else if (!strcmp(mode, "bw")) bw(max, 0, 0);
    else if (!strcmp(mode, "bibw")) bw(max, 1, 0);
    else if (!strcmp(mode, "mr")) bw(max, 0, 1);
    else if (!strcmp(mode, "ring")) ring(arg ? arg : 10000, 0);
    else if (!strcmp(mode, "shift")) ring(arg ? arg : 10000, 1);
    else if (!strcmp(mode, "barrier")) barrier(arg ? arg : 10000);
    else if (is_coll) coll(mode, max);
    else if (rank == 0) fprintf(stderr, "unknown mode %s\n", mode);
    MPI_Finalize();
    return 0;
}
