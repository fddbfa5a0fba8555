package xredis_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

func TestSmoke(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		k := keys(t)
		ctx := bg()
		id, err := e.Add(ctx, k("s"), xstream.AddArgs{ID: "1-1"}, xstream.Fields("a", "1", "b", "2", "a", "3")...)
		require.NoError(t, err)
		require.Equal(t, xstream.ID{Ms: 1, Seq: 1}, id)
		es, err := e.Range(ctx, k("s"), "-", "+", 0)
		require.NoError(t, err)
		require.Equal(t, []xstream.Entry{{ID: id, Fields: xstream.Fields("a", "1", "b", "2", "a", "3")}}, es)
		t.Logf("%s: %+v", kind, e.Server())
	})
}
