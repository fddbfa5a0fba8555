package xredis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
)

// The engine passes no idempotency to the server: an idempotent Add fails
// with an error wrapping errors.ErrUnsupported, creating nothing, and the
// engine is no xstream.IdempotenceEngine. Info and InfoFull read the
// server's IDMP fields (Redis 8.6, xstream's server) and nacked-count
// (Redis 8.8, xstream's server) when it gives them.
func TestIdempotenceUnsupported(t *testing.T) {
	e := newEngine(t, "xstream")
	s := keys(t)("s")
	_, err := e.Add(bg(), s, xstream.AddArgs{Idempotency: xstream.Idempotency{Producer: "p", ID: "i"}}, xstream.Fields("f", "v")...)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorContains(t, err, "IDMP")
	n, err := e.Len(bg(), s)
	require.NoError(t, err)
	require.Zero(t, n)
	require.ErrorIs(t, xstream.SetIdempotence(bg(), e, s, xstream.IdempotenceConfig{MaxSize: 5}), errors.ErrUnsupported)

	// Through the server's own commands, the fields are read back.
	c := e.Client()
	for range 2 {
		require.NoError(t, c.Do(bg(), c.B().Arbitrary("XADD").Keys(s).Args("IDMP", "p", "i", "*", "f", "v").Build()).Error())
	}
	info, err := e.Info(bg(), s)
	require.NoError(t, err)
	require.Equal(t, &xstream.IdempotenceInfo{
		IdempotenceConfig: xstream.IdempotenceConfig{Duration: 100 * time.Second, MaxSize: 100},
		Producers:         1, Tracked: 1, Added: 1, Duplicates: 1,
	}, info.Idempotence)
	require.NoError(t, c.Do(bg(), c.B().Arbitrary("XCFGSET").Keys(s).Args("IDMP-DURATION", "7").Build()).Error())
	require.NoError(t, e.CreateGroup(bg(), s, "g", "0", xstream.GroupOptions{}))
	_, err = e.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{}, s, ">")
	require.NoError(t, err)
	es, err := e.Range(bg(), s, "-", "+", 0)
	require.NoError(t, err)
	_, err = xstream.Nack(bg(), e, s, "g", xstream.NackFail, []string{es[0].ID.String()}, xstream.NackArgs{})
	require.NoError(t, err)
	full, err := e.InfoFull(bg(), s, 0)
	require.NoError(t, err)
	require.Equal(t, &xstream.IdempotenceInfo{
		IdempotenceConfig: xstream.IdempotenceConfig{Duration: 7 * time.Second, MaxSize: 100},
		Added:             1, Duplicates: 1,
	}, full.Idempotence)
	require.Len(t, full.GroupDetails, 1)
	require.EqualValues(t, 1, full.GroupDetails[0].Nacked)
}
