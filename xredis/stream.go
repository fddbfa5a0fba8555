package xredis

import (
	"context"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

func (b *base) Add(ctx context.Context, stream string, args xstream.AddArgs, fields ...xstream.Field) (xstream.ID, error) {
	id, trim, err := b.addArgs(args, fields)
	if err != nil {
		if args.NoMkStream {
			// The core looks for the stream first.
			return xstream.ID{}, b.orNoStream(ctx, stream, err)
		}
		return xstream.ID{}, err
	}
	cmd := b.c.B().Arbitrary("XADD").Keys(stream)
	if args.NoMkStream {
		cmd = cmd.Args("NOMKSTREAM")
	}
	cmd = cmd.Args(trim...).Args(id)
	for _, f := range fields {
		cmd = cmd.Args(f.Name, f.Value)
	}
	res, werr := b.c.write1(ctx, cmd.Build())
	s, err := res.ToString()
	if err != nil {
		if rueidis.IsRedisNil(err) {
			return xstream.ID{}, errorf(xstream.ErrNoStream, "%q", stream)
		}
		return xstream.ID{}, mapErr(err)
	}
	added, err := xstream.ParseID(s)
	if err == nil {
		err = werr
	}
	return added, err
}

func (b *base) addArgs(args xstream.AddArgs, fields []xstream.Field) (string, []string, error) {
	if len(fields) == 0 {
		return "", nil, errorf(xstream.ErrNoFields, "Add was given no fields")
	}
	if args.Idempotency != (xstream.Idempotency{}) {
		return "", nil, errorf(errUnsupported, "idempotent Add (AddArgs.Idempotency, Redis 8.6 XADD IDMP) is not supported by this engine")
	}
	id, err := addID(args.ID)
	if err != nil {
		return "", nil, err
	}
	trim, err := b.trimArgs(args.Trim)
	return id, trim, err
}

func (b *base) Range(ctx context.Context, stream, start, end string, count int) ([]xstream.Entry, error) {
	return b.rangeGeneric(ctx, "XRANGE", stream, start, end, count)
}

func (b *base) RevRange(ctx context.Context, stream, end, start string, count int) ([]xstream.Entry, error) {
	return b.rangeGeneric(ctx, "XREVRANGE", stream, start, end, count)
}

func (b *base) rangeGeneric(ctx context.Context, cmdName, stream, start, end string, count int) ([]xstream.Entry, error) {
	cerr := checkCount(count)
	from, to, empty, err := rangeArgs(start, end)
	switch {
	case cerr != nil && err != nil:
		// The core checks the count first on a stream, the bounds
		// first without one.
		if ok, xerr := b.exists(ctx, stream); xerr != nil {
			return nil, xerr
		} else if ok {
			return nil, cerr
		}
		return nil, err
	case cerr != nil:
		return nil, cerr
	case err != nil || empty:
		return nil, err
	}
	if cmdName == "XREVRANGE" {
		from, to = to, from
	}
	cmd := b.c.B().Arbitrary(cmdName).Keys(stream).Args(from, to)
	if count > 0 {
		cmd = cmd.Args("COUNT", itoa(int64(count)))
	}
	res := b.c.Do(ctx, cmd.ReadOnly())
	m, err := res.ToMessage()
	if err != nil {
		return nil, mapErr(err)
	}
	return entries(&m)
}

func (b *base) Len(ctx context.Context, stream string) (int64, error) {
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("XLEN").Keys(stream).ReadOnly()).AsInt64()
	return n, mapErr(err)
}

// Delete sends XDEL. A missing stream deletes nothing, before the IDs
// are looked at (see sendIDs).
func (b *base) Delete(ctx context.Context, stream string, ids ...string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	send, perr := sendIDs(ids)
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("XDEL").Keys(stream).Args(send...).Build()).AsInt64()
	if err != nil {
		return 0, invalidIDs(perr, err)
	}
	return n, nil
}

func (b *base) Trim(ctx context.Context, stream string, args xstream.TrimArgs) (int64, error) {
	trim, err := b.trimArgs(args)
	if err != nil || trim == nil {
		return 0, err
	}
	n, err := b.c.Do(ctx, b.c.B().Arbitrary("XTRIM").Keys(stream).Args(trim...).Build()).AsInt64()
	return n, mapErr(err)
}

func (b *base) SetID(ctx context.Context, stream string, args xstream.SetIDArgs) error {
	cmd, err := setIDArgs(args)
	if err != nil {
		return b.orNoStream(ctx, stream, err)
	}
	return mapErr(b.c.Do(ctx, b.c.B().Arbitrary("XSETID").Keys(stream).Args(cmd...).Build()).Error())
}

func setIDArgs(args xstream.SetIDArgs) ([]string, error) {
	last, err := xstream.ParseID(args.LastID)
	if err != nil {
		return nil, err
	}
	out := []string{last.String()}
	if args.MaxDeletedID != "" {
		maxDel, err := xstream.ParseID(args.MaxDeletedID)
		if err != nil {
			return nil, err
		}
		if last.Less(maxDel) {
			return nil, errorf(xstream.ErrIDTooSmall, "last ID %s is smaller than the given max deleted ID %s", last, maxDel)
		}
		if !maxDel.IsZero() {
			out = append(out, "MAXDELETEDID", maxDel.String())
		}
	}
	if args.EntriesAdded < -1 {
		return nil, errorf(xstream.ErrInvalidArgument, "EntriesAdded must be >= -1, got %d", args.EntriesAdded)
	}
	if args.EntriesAdded >= 0 {
		out = append(out, "ENTRIESADDED", itoa(args.EntriesAdded))
	}
	return out, nil
}

func (b *base) Info(ctx context.Context, stream string) (xstream.StreamInfo, error) {
	m, err := b.c.Do(ctx, b.c.B().Arbitrary("XINFO", "STREAM").Keys(stream).ReadOnly()).ToMessage()
	if err != nil {
		return xstream.StreamInfo{}, mapErr(err)
	}
	f := newInfo(&m)
	si := streamHead(f)
	si.Groups = int(f.int("groups"))
	if si.FirstEntry, err = optEntry(f.msg("first-entry")); err != nil {
		return si, err
	}
	if si.LastEntry, err = optEntry(f.msg("last-entry")); err != nil {
		return si, err
	}
	return si, f.err
}

// streamHead reads the fields that XINFO STREAM and XINFO STREAM FULL
// share.
func streamHead(f *info) xstream.StreamInfo {
	si := xstream.StreamInfo{
		Length:               f.int("length"),
		RadixTreeKeys:        int(f.int("radix-tree-keys")),
		LastGeneratedID:      f.id("last-generated-id"),
		MaxDeletedEntryID:    f.id("max-deleted-entry-id"),
		EntriesAdded:         f.int("entries-added"),
		RecordedFirstEntryID: f.id("recorded-first-entry-id"),
	}
	// The IDMP fields of Redis 8.6 (and xstream's server).
	if dur, ok := f.optInt("idmp-duration"); ok {
		idmp := xstream.IdempotenceInfo{
			IdempotenceConfig: xstream.IdempotenceConfig{Duration: time.Duration(dur) * time.Second, MaxSize: int(f.int("idmp-maxsize"))},
			Producers:         int(f.int("pids-tracked")),
			Tracked:           int(f.int("iids-tracked")),
			Added:             f.int("iids-added"),
			Duplicates:        f.int("iids-duplicates"),
		}
		if idmp != xstream.UnusedIdempotence {
			si.Idempotence = &idmp
		}
	}
	return si
}

func optEntry(m *rueidis.RedisMessage) (*xstream.Entry, error) {
	if m == nil || m.IsNil() {
		return nil, nil
	}
	es, err := entryList([]rueidis.RedisMessage{*m})
	if err != nil || len(es) == 0 {
		return nil, err
	}
	return &es[0], nil
}

// InfoFull sends XINFO STREAM FULL COUNT count, with an XREVRANGE for the
// last entry (FULL lists the first count entries only) and TIME, so that
// idle times, which FULL gives as times, are measured on the server's
// clock: the three go to the stream's node in one round trip, but are not
// one atomic step.
func (b *base) InfoFull(ctx context.Context, stream string, count int) (xstream.StreamInfo, error) {
	if err := checkCount(count); err != nil {
		return xstream.StreamInfo{}, b.orNoStream(ctx, stream, err)
	}
	res := b.c.DoMulti(ctx,
		b.c.B().Arbitrary("XINFO", "STREAM").Keys(stream).Args("FULL", "COUNT", itoa(int64(count))).ReadOnly(),
		b.c.B().Arbitrary("XREVRANGE").Keys(stream).Args("+", "-", "COUNT", "1").ReadOnly(),
		b.c.B().Arbitrary("TIME").ReadOnly(),
	)
	for _, r := range res[:2] {
		if err := r.Error(); err != nil {
			return xstream.StreamInfo{}, mapErr(err)
		}
	}
	now, err := serverTime(res[2])
	if err != nil {
		return xstream.StreamInfo{}, err
	}
	m, _ := res[0].ToMessage()
	f := newInfo(&m)
	si := streamHead(f)
	es := f.array("entries")
	if si.Entries, err = entryList(es); err != nil {
		return si, err
	}
	if len(si.Entries) > 0 {
		si.FirstEntry = &si.Entries[0]
	}
	last, _ := res[1].ToMessage()
	lastEs, err := entries(&last)
	if err != nil {
		return si, err
	}
	if len(lastEs) > 0 {
		si.LastEntry = &lastEs[0]
	}
	groups := f.array("groups")
	si.Groups = len(groups)
	for i := range groups {
		d, err := groupDetail(&groups[i], now)
		if err != nil {
			return si, err
		}
		si.GroupDetails = append(si.GroupDetails, d)
	}
	return si, f.err
}

// serverTime decodes the reply to TIME, in Unix milliseconds; a server
// without TIME (xstream's) shares the client's clock.
func serverTime(r rueidis.RedisResult) (int64, error) {
	if err := r.Error(); isRedisErr(err) {
		return time.Now().UnixMilli(), nil
	} else if err != nil {
		return 0, err
	}
	parts, err := r.AsIntSlice()
	if err != nil || len(parts) != 2 {
		m, _ := r.ToMessage()
		return 0, badReply("TIME", &m)
	}
	return parts[0]*1000 + parts[1]/1000, nil
}

func groupDetail(m *rueidis.RedisMessage, now int64) (xstream.GroupDetail, error) {
	f := newInfo(m)
	d := xstream.GroupDetail{GroupInfo: groupProgress(f)}
	d.Pending = f.int("pel-count")
	d.Nacked = f.int("nacked-count") // Redis 8.8
	for _, p := range f.array("pending") {
		row := vals(&p)
		if len(row) != 4 {
			return d, badReply("XINFO STREAM FULL", m)
		}
		pe, err := pelRow(&row[0], &row[3], &row[2], now)
		if err != nil {
			return d, err
		}
		if pe.Consumer, err = row[1].ToString(); err != nil {
			return d, err
		}
		if pe.Idle == xstream.NackIdle {
			pe.Consumer = ""
		}
		d.PEL = append(d.PEL, pe)
	}
	consumers := f.array("consumers")
	d.GroupInfo.Consumers = len(consumers)
	for i := range consumers {
		cf := newInfo(&consumers[i])
		cd := xstream.ConsumerDetail{ConsumerInfo: xstream.ConsumerInfo{
			Name:    cf.str("name"),
			Pending: cf.int("pel-count"),
		}}
		seen := cf.int("seen-time")
		cd.SeenTime = time.UnixMilli(seen)
		cd.Idle = ms(now - seen)
		if active, ok := cf.optInt("active-time"); ok && active >= 0 {
			cd.ActiveTime = time.UnixMilli(active)
			cd.Inactive, cd.InactiveKnown = ms(now-active), true
		}
		for _, p := range cf.array("pending") {
			row := vals(&p)
			if len(row) != 3 {
				return d, badReply("XINFO STREAM FULL", m)
			}
			pe, err := pelRow(&row[0], &row[2], &row[1], now)
			if err != nil {
				return d, err
			}
			pe.Consumer = cd.Name
			cd.PEL = append(cd.PEL, pe)
		}
		if cf.err != nil {
			return d, cf.err
		}
		d.Consumers = append(d.Consumers, cd)
	}
	return d, f.err
}

// pelRow decodes a pending entry of XINFO STREAM FULL; a delivery time
// of 0 is that of an entry given back by XNACK.
func pelRow(id, count, delivery *rueidis.RedisMessage, now int64) (xstream.PendingEntry, error) {
	var pe xstream.PendingEntry
	var err error
	if pe.ID, err = idOf(id); err != nil {
		return pe, err
	}
	if pe.Deliveries, err = count.AsInt64(); err != nil {
		return pe, err
	}
	t, err := delivery.AsInt64()
	if err != nil {
		return pe, err
	}
	if t == 0 {
		pe.Idle = xstream.NackIdle
	} else {
		pe.Idle = ms(now - t)
	}
	return pe, nil
}

// Remove deletes the keys with DEL, one command per hash slot in a
// cluster. It deletes keys of any type, as DEL does.
func (b *base) Remove(ctx context.Context, streams ...string) (int64, error) {
	if len(streams) == 0 {
		return 0, nil
	}
	groups := slotGroups(streams, b.cluster)
	cmds := make(rueidis.Commands, len(groups))
	for i, g := range groups {
		cmd := b.c.B().Arbitrary("DEL")
		for _, j := range g {
			cmd = cmd.Keys(streams[j])
		}
		cmds[i] = cmd.Build()
	}
	var n int64
	for _, r := range b.c.DoMulti(ctx, cmds...) {
		k, err := r.AsInt64()
		if err != nil {
			return n, mapErr(err)
		}
		n += k
	}
	return n, nil
}
