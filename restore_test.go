package xstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func restoreImage() StreamImage {
	return StreamImage{
		Entries:      []Entry{{ID: ID{5, 0}, Fields: Fields("f", "5")}, {ID: ID{6, 0}, Fields: Fields("f", "6")}},
		LastID:       ID{7, 0},
		EntriesAdded: 4,
		MaxDeletedID: ID{4, 0},
		Groups: []GroupImage{{
			Name: "g", LastID: ID{5, 0}, EntriesRead: 3,
			Consumers: []ConsumerImage{{Name: "c", SeenTime: expT0, ActiveTime: expT0}, {Name: "idle", SeenTime: expT0}},
			Pending:   []PendingImage{{ID: ID{2, 0}, Consumer: "c", DeliveryTime: expT0, DeliveryCount: 3}, {ID: ID{5, 0}, Consumer: "c", DeliveryTime: expT0, DeliveryCount: 1}},
		}},
		ExpiresAt: expT0.Add(time.Hour),
	}
}

func TestRestore(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	dir := t.TempDir()
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	ok, err := db.Restore("s", restoreImage(), false)
	require.NoError(t, err)
	require.True(t, ok)
	check := func(db *DB) {
		t.Helper()
		s, found := db.Lookup("s")
		require.True(t, found)
		info, err := s.InfoFull(0)
		require.NoError(t, err)
		require.Equal(t, []string{"5-0", "6-0"}, ids(info.Entries))
		require.Equal(t, ID{7, 0}, info.LastGeneratedID)
		require.Equal(t, int64(4), info.EntriesAdded)
		require.Equal(t, ID{4, 0}, info.MaxDeletedEntryID)
		g := info.GroupDetails[0]
		require.Equal(t, int64(3), g.EntriesRead)
		require.Len(t, g.PEL, 2)
		require.Equal(t, ID{2, 0}, g.PEL[0].ID, "a pending entry no longer in the stream")
		require.Equal(t, int64(3), g.PEL[0].Deliveries)
		require.Len(t, g.Consumers, 2)
		at, _ := s.ExpiresAt()
		require.Equal(t, expT0.Add(time.Hour), at)
	}
	check(db)
	ok, err = db.Restore("s", StreamImage{}, false)
	require.NoError(t, err)
	require.False(t, ok, "without replace an existing stream stays")
	check(db)
	require.NoError(t, db.Close())
	check(openT(t, dir, clk)) // the restored stream survives a restart
}

func TestRestoreBadImage(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	for _, tc := range []struct {
		name  string
		bad   func(*StreamImage)
		names []string
	}{
		{"entries out of order", func(i *StreamImage) { i.Entries[0].ID = ID{9, 0} }, []string{"6-0", "9-0"}},
		{"a 0-0 entry", func(i *StreamImage) { i.Entries[0].ID = ID{} }, []string{"0-0"}},
		{"an entry without fields", func(i *StreamImage) { i.Entries[1].Fields = nil }, []string{"6-0"}},
		{"last ID before the last entry", func(i *StreamImage) { i.LastID = ID{5, 0} }, []string{"5-0", "6-0"}},
		{"too few added", func(i *StreamImage) { i.EntriesAdded = 1 }, []string{"1"}},
		{"a group twice", func(i *StreamImage) { i.Groups = append(i.Groups, i.Groups[0]) }, []string{`"g"`}},
		{"entries read", func(i *StreamImage) { i.Groups[0].EntriesRead = -2 }, []string{"-2"}},
		{"a consumer twice", func(i *StreamImage) { i.Groups[0].Consumers[1].Name = "c" }, []string{`"c"`}},
		{"an unknown owner", func(i *StreamImage) { i.Groups[0].Pending[0].Consumer = "nobody" }, []string{"nobody"}},
		{"pending out of order", func(i *StreamImage) { i.Groups[0].Pending[0].ID = ID{8, 0} }, []string{"8-0"}},
		{"a negative count", func(i *StreamImage) { i.Groups[0].Pending[0].DeliveryCount = -1 }, []string{"-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := restoreImage()
			tc.bad(&img)
			ok, err := db.Restore("s", img, true)
			require.False(t, ok)
			requireErr(t, err, ErrInvalidArgument, tc.names...)
			require.Zero(t, db.Len(), "nothing made")
		})
	}
}
