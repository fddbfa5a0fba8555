package wal

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testRecords returns n deterministic payloads of 0 to 150 bytes.
func testRecords(n int, seed uint64) [][]byte { return sizedRecords(n, seed, 150) }

// sizedRecords returns n deterministic payloads of 0 to max bytes.
func sizedRecords(n int, seed uint64, max int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make([][]byte, n)
	for i := range recs {
		p := make([]byte, rng.IntN(max+1))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		recs[i] = p
	}
	return recs
}

// segmentBytes returns a log segment holding recs and the offset of each
// frame, followed by the offset of the end.
func segmentBytes(base uint64, recs [][]byte) ([]byte, []int) {
	b := AppendHeader(nil, KindLog, base)
	offs := make([]int, 0, len(recs)+1)
	for _, r := range recs {
		offs = append(offs, len(b))
		b = AppendFrame(b, r)
	}
	return b, append(offs, len(b))
}

// collect scans data as the segment at path and returns the payloads,
// copied, with the result.
func collect(data []byte, path string) ([][]byte, ScanResult, error) {
	var got [][]byte
	res, err := scanSegmentData(data, path, func(p []byte) error {
		got = append(got, append([]byte{}, p...))
		return nil
	})
	return got, res, err
}

// writeFile writes data to dir/name and returns its path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// requirePrefix checks that got is recs[:n], a record for a record.
func requirePrefix(t testing.TB, recs, got [][]byte, n int) {
	t.Helper()
	require.Len(t, got, n)
	for i := range got {
		require.Equal(t, recs[i], got[i], "record %d", i)
	}
}
