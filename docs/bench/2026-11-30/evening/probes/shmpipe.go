// shmpipe: the floor of a two-copy ping-pong of N bytes through shared
// memory, in chunks: the sender copies chunk k into the ring and publishes
// it (a sequence word per chunk), the receiver copies each chunk out as it
// lands. Both ways, M round trips; prints the one-way time per size and
// chunk size.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const ringBytes = 1 << 20

type side struct {
	seq  *[64]atomic.Uint64 // per chunk slot, padded: slot i's seq at seq[i*8]
	data []byte
}

func mapShared(path string, create bool) []byte {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0600)
	if err != nil {
		panic(err)
	}
	if create {
		f.Truncate(4 << 20)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, 4<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		panic(err)
	}
	return b
}

// layout: [0,4096) ctl for dir 0 (seq words), [4096,8192) ctl dir 1, then two rings of 1 MiB.
func sides(b []byte) [2]side {
	var s [2]side
	for d := 0; d < 2; d++ {
		s[d].seq = (*[64]atomic.Uint64)(unsafe.Pointer(&b[d*4096]))
		s[d].data = b[8192+d*ringBytes : 8192+(d+1)*ringBytes]
	}
	return s
}

func send(s side, buf []byte, chunk int, gen uint64) {
	for k, off := 0, 0; off < len(buf); k, off = k+1, off+chunk {
		n := min(chunk, len(buf)-off)
		copy(s.data[off:off+n], buf[off:off+n])
		s.seq[(k%8)*8].Store(gen<<8 | uint64(k))
	}
}

func recv(s side, buf []byte, chunk int, gen uint64) {
	for k, off := 0, 0; off < len(buf); k, off = k+1, off+chunk {
		n := min(chunk, len(buf)-off)
		for s.seq[(k%8)*8].Load() != gen<<8|uint64(k) {
		}
		copy(buf[off:off+n], s.data[off:off+n])
	}
}

func main() {
	path := "/dev/shm/shmpipe-test"
	if len(os.Args) > 1 && os.Args[1] == "child" {
		b := mapShared(path, false)
		s := sides(b)
		size, _ := strconv.Atoi(os.Args[2])
		chunk, _ := strconv.Atoi(os.Args[3])
		iters, _ := strconv.Atoi(os.Args[4])
		buf := make([]byte, size)
		for i := 1; i <= iters; i++ {
			recv(s[0], buf, chunk, uint64(i))
			send(s[1], buf, chunk, uint64(i))
		}
		return
	}
	for _, size := range []int{8192, 16384} {
		for _, chunk := range []int{size, 8192, 4096, 2048, 1024} {
			if chunk > size {
				continue
			}
			b := mapShared(path, true)
			s := sides(b)
			const iters = 20000
			cmd := exec.Command("taskset", "-c", "1", "/tmp/shmpipe/shmpipe", "child", fmt.Sprint(size), fmt.Sprint(chunk), fmt.Sprint(iters))
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				panic(err)
			}
			buf := make([]byte, size)
			for i := range buf {
				buf[i] = byte(i)
			}
			var t0 time.Time
			for i := 1; i <= iters; i++ {
				if i == 1000 {
					t0 = time.Now()
				}
				send(s[0], buf, chunk, uint64(i))
				recv(s[1], buf, chunk, uint64(i))
			}
			cmd.Wait()
			fmt.Printf("size %6d chunk %6d: one-way %.2f us\n", size, chunk, float64(time.Since(t0).Nanoseconds())/float64(iters-1000)/2/1000)
			unix.Munmap(b)
		}
	}
	os.Remove(path)
}
