package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		n := 1 << 16
		var b []byte
		switch os.Args[2] {
		case "heap":
			raw := make([]byte, n+8192)
			off := 4096 - int(uintptr(unsafe.Pointer(&raw[0]))%4096)
			b = raw[off : off+n]
		case "mmap":
			b, _ = unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		}
		for i := range b {
			b[i] = 'a'
		}
		fmt.Printf("%d\n", uintptr(unsafe.Pointer(&b[0])))
		time.Sleep(time.Hour)
		return
	}
	for _, kind := range []string{"heap", "mmap", "heap", "mmap"} {
		cmd := exec.Command("/proc/self/exe", "child", kind)
		out, _ := cmd.StdoutPipe()
		cmd.Start()
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr, _ := strconv.ParseUint(line[:len(line)-1], 10, 64)
		pid := cmd.Process.Pid
		for _, size := range []int{4096, 8192, 16384, 32768} {
			dst := make([]byte, size+4096)
			off := 4096 - int(uintptr(unsafe.Pointer(&dst[0]))%4096)
			d := dst[off : off+size]
			l := []unix.Iovec{{Base: &d[0], Len: uint64(size)}}
			r := []unix.RemoteIovec{{Base: uintptr(addr), Len: size}}
			const N = 50000
			t0 := time.Now()
			for i := 0; i < N; i++ {
				if _, err := unix.ProcessVMReadv(pid, l, r, 0); err != nil {
					panic(err)
				}
			}
			fmt.Printf("%s %d: %.0f ns\n", kind, size, float64(time.Since(t0).Nanoseconds())/N)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
}
