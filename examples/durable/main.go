// Command durable shows that a durable DB survives kill -9: it starts a
// copy of itself that adds entries to a DB on disk under SyncAlways and
// prints each acknowledged ID, kills that copy with SIGKILL in the middle
// of its work, and then opens the DB again and finds every acknowledged
// entry. It needs no set-up and stops by itself:
//
//	go run ./examples/durable
package main

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/xstreamgo/xstream"
)

const writerEnv = "XSTREAM_EXAMPLE_WRITER_DIR"

func main() {
	if dir := os.Getenv(writerEnv); dir != "" {
		writer(dir)
		return
	}
	dir, err := os.MkdirTemp("", "xstream-durable-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Start the writer and read the IDs it acknowledges.
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), writerEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	var acked []string
	lines := bufio.NewScanner(out)
	for len(acked) < 500 && lines.Scan() {
		acked = append(acked, lines.Text())
	}
	// Kill it in the middle of its work: no Close, no flush.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		log.Fatal(err)
	}
	for lines.Scan() {
		acked = append(acked, lines.Text()) // printed before it died
	}
	cmd.Wait()
	fmt.Printf("the writer was killed after %d acknowledged adds\n", len(acked))

	// Recover.
	db, err := xstream.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, c := range db.LogCuts() {
		log.Print(c) // the end of a write the kill cut short, if any
	}
	s := db.Stream("orders")
	fmt.Printf("after recovery the stream holds %d entries\n", s.Len())
	missing := 0
	for _, line := range acked {
		id, n, _ := strings.Cut(line, " ")
		es, err := s.Range(id, id, 1)
		if err != nil {
			log.Fatal(err)
		}
		if len(es) != 1 || es[0].Fields[0].Value != n {
			missing++
		}
	}
	fmt.Printf("acknowledged entries missing: %d\n", missing)
	last, _ := s.RevRange("+", "-", 1)
	fmt.Printf("the last entry: %s %v\n", last[0].ID, last[0].Fields)
}

// writer adds entries until it is killed, printing "ID n" for each Add
// that returned: under SyncAlways that entry is on disk.
func writer(dir string) {
	db, err := xstream.Open(dir, xstream.WithSync(xstream.SyncAlways))
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	for n := 1; ; n++ {
		id, err := db.Add("orders", xstream.AddArgs{}, xstream.Fields("n", strconv.Itoa(n), "item", "book")...)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(w, "%s %d\n", id, n)
		w.Flush()
	}
}
