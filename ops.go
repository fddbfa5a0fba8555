package xstream

import (
	"unsafe"

	"github.com/xstreamgo/xstream/internal/store"
)

// Operations: the one home of every change to a stream's state.
//
// Public methods check their arguments, take the stream's lock, decide
// what to change, and then change it only through the functions of this
// file (entries and stream counters) and of groupops.go (consumer groups,
// consumers and pending entries). Each records an effect, not a command:
// the resolved ID of an added entry, the bound of a trim, the time and
// count of a delivery. So a change is applied in one place, and the same
// functions apply it again when a durable DB replays its log.
//
// Every function here needs the stream's write lock (the Locked suffix).

// sID is the storage's ID type, which converts to and from ID at no cost.
type sID = store.ID

// sid converts an ID to the storage's.
func sid(id ID) sID { return sID(id) }

// sids views ids as the storage's IDs, which have the same layout (sid's
// conversion compiles only while they do).
func sids(ids []ID) []sID {
	return unsafe.Slice((*sID)(unsafe.Pointer(unsafe.SliceData(ids))), len(ids))
}

// storeFields views fields as the storage's field type, which has the
// same layout (the conversion below compiles only while it does): the
// same slice header, reinterpreted, which costs nothing (unsafe.Slice
// would check len*size for overflow at every Add).
func storeFields(fs []Field) []store.Field {
	return *(*[]store.Field)(unsafe.Pointer(&fs))
}

var _ = store.Field(Field{}) // Field and store.Field have one underlying type

// appendLocked stores an entry; id is greater than the stream's last ID.
func (s *Stream) appendLocked(id ID, fields []Field) {
	if s.log != nil {
		s.appendLogged(id, fields)
		return
	}
	s.appendMemLocked(id, fields)
}

// appendMemLocked is appendLocked for a stream without a log (in memory):
// small enough to be inlined into Add's hottest path.
func (s *Stream) appendMemLocked(id ID, fields []Field) {
	s.ctr.added++
	s.st.Append(store.ID(id), storeFields(fields))
}

// appendBatchLocked stores entries[i] with ID ids[i], in order, as
// appendLocked of each would; the IDs increase from above the stream's
// last ID. In memory the storage takes them in one call.
func (s *Stream) appendBatchLocked(ids []ID, entries [][]Field) {
	if s.log != nil {
		for i, fields := range entries {
			s.appendLocked(ids[i], fields)
		}
		return
	}
	s.ctr.added += int64(len(entries))
	s.st.AppendBatch(sids(ids), storeEntries(entries))
}

// storeEntries views entries as the storage's, as storeFields does.
func storeEntries(entries [][]Field) [][]store.Field {
	return unsafe.Slice((*[]store.Field)(unsafe.Pointer(unsafe.SliceData(entries))), len(entries))
}

func (s *Stream) appendLogged(id ID, fields []Field) {
	s.ctr.added++
	last := ID(s.st.LastID())
	same := s.st.Append(store.ID(id), storeFields(fields))
	s.log.append(last, id, fields, same)
}

// trimToLocked removes every live entry with an ID up to upTo, leaving
// consumer group references to them (a KeepRef trim), and returns how many
// it removed.
func (s *Stream) trimToLocked(upTo ID) int64 {
	if s.log != nil {
		s.log.idEffect(effTrimTo, upTo)
	}
	n := s.st.TrimTo(store.ID(upTo))
	s.ctr.trimmed += n
	return n
}

// trimFrontLocked removes the live entries a KeepRef trim of spec
// removes, a prefix of them, leaving consumer group references to them,
// and returns how many it removed. It records the bound it reached, which
// replay applies with trimToLocked.
func (s *Stream) trimFrontLocked(spec *store.TrimSpec) int64 {
	upTo, n := s.st.Trim(spec)
	if n > 0 {
		if s.log != nil {
			s.log.idEffect(effTrimTo, ID(upTo))
		}
		s.ctr.trimmed += n
	}
	return n
}

// trimEntryLocked removes the live entry id as a trim does (the max
// deleted ID stays), first dropping it from every group's PEL when
// dropRefs (a DelRef trim).
func (s *Stream) trimEntryLocked(id ID, dropRefs bool) {
	if dropRefs {
		s.dropRefsLocked(id)
	}
	if s.log != nil {
		s.log.idEffect(effTrimEntry, id)
	}
	if s.st.TrimEntry(store.ID(id)) {
		s.ctr.trimmed++
	}
}

// deleteEntryLocked deletes the entry id as Delete does, raising the max
// deleted ID, and reports whether it was a live entry.
func (s *Stream) deleteEntryLocked(id ID) bool {
	if s.log != nil {
		if !s.st.Has(store.ID(id)) {
			return false
		}
		s.log.idEffect(effDelete, id)
	}
	if !s.st.Delete(store.ID(id)) {
		return false
	}
	s.ctr.deleted++
	return true
}

// setLastLocked sets the stream's last ID, entries-added counter (when
// entriesAdded >= 0) and max deleted ID (when not 0-0), as SetID does.
func (s *Stream) setLastLocked(last ID, entriesAdded int64, maxDeleted ID) {
	if s.log != nil {
		s.log.setLast(last, entriesAdded, maxDeleted)
	}
	s.st.SetLast(store.ID(last), entriesAdded, store.ID(maxDeleted))
}
