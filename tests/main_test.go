package tests

import (
	"fmt"
	"os"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

func TestMain(m *testing.M) {
	cleanup, err := jobtest.Setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
