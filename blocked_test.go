package xstream

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBlocked(t *testing.T) {
	db := NewDB()
	s := db.Stream("s")
	require.NoError(t, s.CreateGroup("g", "$", GroupOptions{}))
	require.Equal(t, 0, s.Blocked())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := make(chan []Entry)
	group := make(chan []Entry)
	go func() {
		es, _ := s.Read(ctx, "$", ReadArgs{Block: BlockForever})
		read <- es
	}()
	go func() {
		es, _ := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Block: BlockForever})
		group <- es
	}()
	for s.Blocked() != 2 {
		runtime.Gosched()
	}
	_, err := s.Add(AddArgs{ID: "1-1"}, Fields("f", "v")...)
	require.NoError(t, err)
	require.Len(t, <-read, 1)
	require.Len(t, <-group, 1)
	require.Equal(t, 0, s.Blocked())
}
