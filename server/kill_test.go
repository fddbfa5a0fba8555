package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// The crash tests run the server in a child process: the test binary run
// again with -test.run=^TestHelperServerProcess$ and the environment
// below. The parent talks to it over the network, kills it with SIGKILL
// (no chance to flush or close anything) and starts another on the same
// directory.

const (
	helperDirEnv    = "XSTREAM_HELPER_DIR"    // the server's Dir: set only in a child
	helperFsyncEnv  = "XSTREAM_HELPER_FSYNC"  // always, everysec or no
	helperAddrEnv   = "XSTREAM_HELPER_ADDR"   // address to listen on ("": a free port)
	helperFsizeEnv  = "XSTREAM_HELPER_FSIZE"  // a file size limit, set after Start (Linux)
	helperNofileEnv = "XSTREAM_HELPER_NOFILE" // a limit on open files, set before New (Linux)
	killSeedEnv     = "XSTREAM_KILL_SEED"     // replays a TestKillRecovery run
	helperReadyLine = "XSTREAM-HELPER-LISTENING "
	// helperMaxClientsLine, after the address, gives the MaxClients
	// the server runs with.
	helperMaxClientsLine = "XSTREAM-HELPER-MAXCLIENTS "
)

// isHelper reports whether this process is a child of the crash tests.
func isHelper() bool { return os.Getenv(helperDirEnv) != "" }

func parsePolicy(s string) (xstream.SyncPolicy, error) {
	for _, p := range []xstream.SyncPolicy{xstream.SyncEverySecond, xstream.SyncAlways, xstream.SyncNo} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown sync policy %q", s)
}

// TestHelperServerProcess is the child: it serves the directory of
// XSTREAM_HELPER_DIR until it is killed, or until SIGTERM, on which it
// closes the server (as xstream-server does) and exits 0. It prints the
// address it listens on.
func TestHelperServerProcess(t *testing.T) {
	if !isHelper() {
		t.Skip("the server process of the crash tests (TestKillRecovery)")
	}
	policy, err := parsePolicy(os.Getenv(helperFsyncEnv))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	if s := os.Getenv(helperNofileEnv); s != "" {
		n, _ := strconv.ParseUint(s, 10, 64)
		if err := limitOpenFiles(n); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(3)
		}
	}
	srv := New(Options{Addr: os.Getenv(helperAddrEnv), Dir: os.Getenv(helperDirEnv), AppendFsync: policy})
	if err := srv.Start(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	if s := os.Getenv(helperFsizeEnv); s != "" {
		n, _ := strconv.ParseInt(s, 10, 64)
		if err := limitFileSize(n); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(3)
		}
	}
	fmt.Println(helperReadyLine + srv.Addr())
	fmt.Println(helperMaxClientsLine + strconv.Itoa(srv.opts.MaxClients))
	<-sig
	if err := srv.Close(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(4)
	}
	os.Exit(0)
}

// child is a server process started by startChild.
type child struct {
	cmd  *exec.Cmd
	addr string
	out  chan string // its output lines after the address
	done chan error  // its exit
}

// startChild runs a server process on dir with the sync policy and the
// extra environment, and returns once it listens.
func startChild(t *testing.T, dir string, policy xstream.SyncPolicy, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServerProcess$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir, helperFsyncEnv+"="+policy.String(), helperAddrEnv+"=127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, out: make(chan string, 100), done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var seen []string
		listening := false
		for sc.Scan() {
			line := sc.Text()
			if addr, ok := strings.CutPrefix(line, helperReadyLine); ok && !listening {
				ready <- addr
				listening = true
				continue
			}
			if !listening {
				seen = append(seen, line)
			} else {
				select {
				case c.out <- line:
				default:
				}
			}
		}
		if !listening {
			ready <- "exited: " + strings.Join(seen, " | ")
		}
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.done
		c.done <- nil
	})
	select {
	case addr := <-ready:
		if strings.HasPrefix(addr, "exited: ") {
			t.Fatalf("the server process %s", addr)
		}
		c.addr = addr
	case <-time.After(time.Minute):
		t.Fatal("the server process did not start within a minute")
	}
	return c
}

// kill ends the process with SIGKILL and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-c.done
	c.done <- err
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the killed server process: %v", err)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (c *child) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		c.done <- err
		if err != nil {
			t.Fatalf("the server process after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the server process did not exit within a minute of SIGTERM")
	}
}

// rawConn is a RESP connection with a deadline on each exchange, for the
// crash tests: a reply counts as acknowledged once it is read whole.
type rawConn struct {
	nc net.Conn
	rd *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, rd: bufio.NewReader(nc)}
}

func (r *rawConn) send(cmds [][]string) error {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(resp(c...))
	}
	r.nc.SetDeadline(time.Now().Add(time.Minute))
	_, err := io.WriteString(r.nc, b.String())
	return err
}

func (r *rawConn) read() (*reply, error) { return readReply(r.rd) }

// do sends one command and returns its reply, failing the test on an
// error of the connection.
func (r *rawConn) do(t *testing.T, args ...string) *reply {
	t.Helper()
	if err := r.send([][]string{args}); err != nil {
		t.Fatal(err)
	}
	rep, err := r.read()
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return rep
}

// crashModel is what the clients of the crash test know of the stream s
// and its group g: what the server acknowledged, what it may have done
// (commands sent without a reply), and what the last restart found.
type crashModel struct {
	mu      sync.Mutex
	sent    map[string][]string // fields of every XADD sent, by its "n" field
	known   map[string][]string // entries that must exist: acknowledged or found after a restart, by ID
	pending map[string]string   // entries that must be pending, to this consumer
	unsure  map[string]bool     // pending entries whose XACK was sent but not acknowledged
	acked   map[string]bool     // entries whose XACK was acknowledged
	lastDel string              // the largest ID delivered to the group that was acknowledged
}

func (m *crashModel) xaddAcked(id string, fields []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.known[id] = fields
}

func (m *crashModel) delivered(consumer string, r *reply) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.null {
		return nil
	}
	if len(r.kids) != 1 || len(r.kids[0].kids) != 2 {
		return fmt.Errorf("XREADGROUP reply %v", r)
	}
	for _, e := range r.kids[0].kids[1].kids {
		id := e.kids[0].s
		var fields []string
		for _, f := range e.kids[1].kids {
			fields = append(fields, f.s)
		}
		m.known[id] = fields
		m.pending[id] = consumer
		if idLess(m.lastDel, id) {
			m.lastDel = id
		}
	}
	return nil
}

// idLess compares two stream IDs ("" is the smallest).
func idLess(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	pa, _ := xstream.ParseID(a)
	pb, _ := xstream.ParseID(b)
	return pa.Less(pb)
}

// TestKillRecovery kills a server process with SIGKILL at random moments
// while clients pipeline XADD, XREADGROUP and XACK to it, then starts one
// again on the same directory and checks that nothing acknowledged was
// lost: every acknowledged XADD's entry is there with its fields in order,
// every entry whose XACK was acknowledged is not pending, every entry
// delivered and not acknowledged is pending to its consumer, and the
// group's last delivered ID covers every acknowledged delivery. Under
// everysec and no this holds because the server writes the log to the OS
// before replying (a process crash loses nothing written), under always
// because a change is on disk before its reply. Several rounds run on the
// same directory, with now and then a background snapshot (BGREWRITEAOF)
// that the kill may cut, and a last one ends with SIGTERM (a clean
// shutdown). XSTREAM_KILL_SEED replays a run's seed.
func TestKillRecovery(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses SIGTERM")
	}
	if isHelper() {
		t.Skip("in a server process")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(killSeedEnv); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (%s=%d to replay)", seed, killSeedEnv, seed)
	for i, policy := range []xstream.SyncPolicy{xstream.SyncEverySecond, xstream.SyncAlways, xstream.SyncNo} {
		t.Run(policy.String(), func(t *testing.T) {
			killRounds(t, policy, rand.New(rand.NewPCG(seed, uint64(i))))
		})
	}
}

// crashRounds is the number of kills of a TestKillRecovery run.
const crashRounds = 3

func killRounds(t *testing.T, policy xstream.SyncPolicy, rng *rand.Rand) {
	dir := t.TempDir()
	m := &crashModel{
		sent: map[string][]string{}, known: map[string][]string{}, pending: map[string]string{},
		unsure: map[string]bool{}, acked: map[string]bool{},
	}
	ch := startChild(t, dir, policy)
	if r := dialRaw(t, ch.addr).do(t, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"); r.s != "OK" {
		t.Fatalf("XGROUP CREATE: %v", r)
	}
	next := 0 // the "n" field of the next XADD
	for round := range crashRounds {
		const clients = 3
		target := 5 + rng.IntN(40) // acknowledged batches before the kill
		var batches sync.WaitGroup
		var mu sync.Mutex
		count := 0
		reached := make(chan struct{})
		seeds := make([]uint64, clients)
		for i := range seeds {
			seeds[i] = rng.Uint64()
		}
		bases := make([]int, clients)
		for i := range bases {
			bases[i] = next + i*1_000_000
		}
		next += clients * 1_000_000
		errs := make(chan error, clients)
		for i := range clients {
			rc := dialRaw(t, ch.addr)
			batches.Add(1)
			go func() {
				defer batches.Done()
				errs <- crashClient(rc, m, rand.New(rand.NewPCG(seeds[i], 1)), "c"+itoa(i), bases[i], func() {
					mu.Lock()
					count++
					if count == target {
						close(reached)
					}
					mu.Unlock()
				})
			}()
		}
		ended := make(chan struct{})
		go func() {
			batches.Wait()
			close(ended)
		}()
		select {
		case <-reached:
		case <-ended:
		}
		ch.kill(t)
		<-ended
		for range clients {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}

		ch = startChild(t, dir, policy)
		checkCrashModel(t, dialRaw(t, ch.addr), m, fmt.Sprintf("round %d", round+1))
	}
	ch.stop(t)
	ch = startChild(t, dir, policy)
	checkCrashModel(t, dialRaw(t, ch.addr), m, "after SIGTERM")
	ch.stop(t)
}

// crashClient pipelines random batches of XADD, XREADGROUP and XACK, and
// now and then a BGREWRITEAOF, until its connection fails (the server was
// killed), recording what the server acknowledged; batch is called after
// each acknowledged batch. It returns an error for an unexpected reply.
func crashClient(rc *rawConn, m *crashModel, rng *rand.Rand, consumer string, n int, batch func()) error {
	var mine []string // delivered to this consumer, not yet acked
	for {
		var cmds [][]string
		var acks [][]string // the IDs of each XACK sent, by command
		for range 1 + rng.IntN(12) {
			switch k := rng.IntN(100); {
			case k == 0:
				cmds = append(cmds, []string{"BGREWRITEAOF"})
				acks = append(acks, nil)
			case k < 60:
				n++
				fields := []string{"n", itoa(n)}
				for range rng.IntN(3) {
					fields = append(fields, "f"+itoa(rng.IntN(2)), strconv.Itoa(rng.IntN(1000)))
				}
				m.mu.Lock()
				m.sent[itoa(n)] = fields
				m.mu.Unlock()
				cmds = append(cmds, append([]string{"XADD", "s", "*"}, fields...))
				acks = append(acks, nil)
			case k < 80 || len(mine) == 0:
				cmds = append(cmds, []string{"XREADGROUP", "GROUP", "g", consumer, "COUNT", itoa(1 + rng.IntN(5)), "STREAMS", "s", ">"})
				acks = append(acks, nil)
			default:
				k := 1 + rng.IntN(min(5, len(mine)))
				ids := mine[:k]
				mine = mine[k:]
				m.mu.Lock()
				for _, id := range ids {
					m.unsure[id] = true
				}
				m.mu.Unlock()
				cmds = append(cmds, append([]string{"XACK", "s", "g"}, ids...))
				acks = append(acks, ids)
			}
		}
		if rc.send(cmds) != nil {
			return nil
		}
		for i, cmd := range cmds {
			r, err := rc.read()
			if err != nil {
				return nil
			}
			switch cmd[0] {
			case "BGREWRITEAOF":
				if r.kind != '+' && !strings.Contains(r.s, "already in progress") {
					return fmt.Errorf("BGREWRITEAOF: %v", r)
				}
			case "XADD":
				if r.kind != '$' {
					return fmt.Errorf("XADD: %v", r)
				}
				m.xaddAcked(r.s, cmd[3:])
			case "XREADGROUP":
				if err := m.delivered(consumer, r); err != nil {
					return err
				}
				if !r.null {
					for _, e := range r.kids[0].kids[1].kids {
						mine = append(mine, e.kids[0].s)
					}
				}
			case "XACK":
				if r.kind != ':' || r.n != int64(len(acks[i])) {
					return fmt.Errorf("%q: %v", cmd, r)
				}
				m.mu.Lock()
				for _, id := range acks[i] {
					delete(m.unsure, id)
					delete(m.pending, id)
					m.acked[id] = true
				}
				m.mu.Unlock()
			}
		}
		batch()
	}
}

// checkCrashModel checks the restarted server against the model, then
// makes what it found the model of the next round.
func checkCrashModel(t *testing.T, rc *rawConn, m *crashModel, when string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	entries := rc.do(t, "XRANGE", "s", "-", "+")
	found := map[string][]string{}
	prev := ""
	for _, e := range entries.kids {
		id := e.kids[0].s
		if prev != "" && !idLess(prev, id) {
			t.Fatalf("%s: XRANGE out of order: %s after %s", when, id, prev)
		}
		prev = id
		var fields []string
		for _, f := range e.kids[1].kids {
			fields = append(fields, f.s)
		}
		if len(fields) < 2 || fields[0] != "n" || !slices.Equal(m.sent[fields[1]], fields) {
			t.Fatalf("%s: entry %s %q was never sent", when, id, fields)
		}
		found[id] = fields
	}
	lost := 0
	for id, fields := range m.known {
		if got, ok := found[id]; !ok || !slices.Equal(got, fields) {
			lost++
			if lost <= 5 {
				t.Errorf("%s: acknowledged entry %s %q: found %q", when, id, fields, got)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%s: %d of %d acknowledged entries lost", when, lost, len(m.known))
	}

	pel := map[string]string{}
	for _, p := range rc.do(t, "XPENDING", "s", "g", "-", "+", "1000000").kids {
		pel[p.kids[0].s] = p.kids[1].s
	}
	for id := range m.acked {
		if c, ok := pel[id]; ok {
			t.Errorf("%s: %s is pending to %s after its XACK was acknowledged", when, id, c)
		}
	}
	for id, consumer := range m.pending {
		if m.unsure[id] {
			continue
		}
		if got := pel[id]; got != consumer {
			t.Errorf("%s: %s delivered to %s is pending to %q", when, id, consumer, got)
		}
	}
	var last string
	for _, g := range rc.do(t, "XINFO", "GROUPS", "s").kids {
		mapFields(g, nil, func(n string, v *reply) {
			if n == "last-delivered-id" {
				last = v.s
			}
		})
	}
	if idLess(last, m.lastDel) {
		t.Errorf("%s: the group's last-delivered-id %s is below the acknowledged delivery of %s", when, last, m.lastDel)
	}
	t.Logf("%s: %d entries (%d acknowledged), %d pending, %d acks acknowledged", when, len(found), len(m.known), len(pel), len(m.acked))

	// What the restart found is what the next round must keep.
	m.known = found
	m.pending = pel
	m.unsure = map[string]bool{}
	if idLess(m.lastDel, last) {
		m.lastDel = last
	}
}
