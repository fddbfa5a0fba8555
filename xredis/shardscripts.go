package xredis

import "github.com/redis/rueidis"

// The Lua scripts of the sharded stream. Each runs atomically on the node
// of its keys, which share a hash slot: a shard's stream and state key
// (the shard scripts), or the metadata hash and the events stream (the
// metadata scripts). They are sent by EVALSHA, and by EVAL the first time
// a node does not know them.
//
// A shard's state key is a hash: s (OPEN or CLOSED), start (the starting
// sequence number), created and closed (ms, on the engine's clock), end
// (the ending sequence number, once CLOSED).
//
// The metadata hash holds: epoch (the shard map's version), map (the
// shard map, JSON), retention (ms), op (the reshard step in progress,
// JSON, while there is one) and lockOwner, lockDeadline, lockWhat (the
// reshard in progress, whose owner may be dead once lockDeadline has
// passed).

// luaLastID is a Lua function returning the last generated ID of a
// stream key, "0-0" when there is none.
const luaLastID = `
local function lastID(key)
  if redis.call('EXISTS', key) == 0 then return '0-0' end
  local info = redis.call('XINFO', 'STREAM', key)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then return info[i+1] end
  end
  return '0-0'
end
`

// createShardScript creates a shard (stream KEYS[1], state KEYS[2]) once:
// its starting sequence number is the greater of ARGV[1] (its parents'
// greatest ending sequence number, "0-0" for none) and the node's time
// as ms-0, and its stream is made with that ID as its last, holding no
// entry, so that every entry added later has a greater ID. ARGV[2] is the
// creation time (ms). It returns {start, created}; run again, it returns
// what the first run stored.
var createShardScript = rueidis.NewLuaScript(`
local st = redis.call('HMGET', KEYS[2], 'start', 'created')
if st[1] then return st end
local t = redis.call('TIME')
local now = tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local start = now .. '-0'
local fms = string.match(ARGV[1], '^(%d+)-')
if #fms > #now or (#fms == #now and fms >= now) then start = ARGV[1] end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('XADD', KEYS[1], 'MAXLEN', '0', start, 'pk', '')
end
redis.call('HSET', KEYS[2], 's', 'OPEN', 'start', start, 'created', ARGV[2])
return {start, ARGV[2]}
`)

// closedID is the last ID of a CLOSED shard's stream: the largest, so
// that XADD with an auto ID fails there ("the stream has exhausted the
// last possible ID").
const closedID = "18446744073709551615-18446744073709551615"

// closeShardScript closes a shard (stream KEYS[1], state KEYS[2]): its
// state becomes CLOSED and its stream's last ID becomes closedID, so that
// no put lands any more; its ending sequence number is the stream's last
// ID before, read in the same step. ARGV[1] is the closing time (ms). It
// returns {end, closed}; run again, it returns what the first run
// stored. A shard that does not exist is an error XSNOSHARD.
var closeShardScript = rueidis.NewLuaScript(luaLastID + `
local st = redis.call('HMGET', KEYS[2], 's', 'end', 'closed')
if not st[1] then return redis.error_reply('XSNOSHARD the shard has no state key') end
if st[1] == 'CLOSED' then return {st[2], st[3]} end
local last = lastID(KEYS[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('XSETID', KEYS[1], '` + closedID + `')
end
redis.call('HSET', KEYS[2], 's', 'CLOSED', 'end', last, 'closed', ARGV[1])
return {last, ARGV[1]}
`)

// createMetaScript creates the metadata hash KEYS[1] of a new sharded
// stream, at epoch 0 with its creation as the step in progress (ARGV[1])
// and the retention ARGV[2] (ms). It returns 0, creating nothing, when
// the hash exists.
var createMetaScript = rueidis.NewLuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'epoch', '0', 'op', ARGV[1], 'retention', ARGV[2])
return 1
`)

// lockScript takes the reshard lock of the metadata hash KEYS[1] for
// owner ARGV[1] until ARGV[2] (ms), doing ARGV[4], when no other owner
// holds it with a deadline after ARGV[3] (now, ms). It returns {1, the
// previous owner or ""} when it took the lock, {0, what the holder does}
// when another holds it.
var lockScript = rueidis.NewLuaScript(`
local o = redis.call('HMGET', KEYS[1], 'lockOwner', 'lockDeadline', 'lockWhat', 'epoch')
if not o[4] then return redis.error_reply('XSNOSTREAM no such sharded stream') end
if o[1] and o[1] ~= ARGV[1] and tonumber(o[2]) > tonumber(ARGV[3]) then return {0, o[3]} end
redis.call('HSET', KEYS[1], 'lockOwner', ARGV[1], 'lockDeadline', ARGV[2], 'lockWhat', ARGV[4])
return {1, o[1] or ''}
`)

// unlockScript releases the reshard lock of KEYS[1] if owner ARGV[1]
// holds it.
var unlockScript = rueidis.NewLuaScript(`
if redis.call('HGET', KEYS[1], 'lockOwner') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'lockOwner', 'lockDeadline', 'lockWhat')
  return 1
end
return 0
`)

// setOpScript records the step ARGV[3] as the one in progress, for the
// shard map of epoch ARGV[2], if owner ARGV[1] holds the lock, the map is
// at that epoch and no step is in progress. It returns 1 when it did, 0
// when the lock is lost, -1 when the map has moved on, -2 when a step is
// in progress.
var setOpScript = rueidis.NewLuaScript(`
local o = redis.call('HMGET', KEYS[1], 'lockOwner', 'epoch', 'op')
if o[1] ~= ARGV[1] then return 0 end
if o[2] ~= ARGV[2] then return -1 end
if o[3] then return -2 end
redis.call('HSET', KEYS[1], 'op', ARGV[3])
return 1
`)

// publishScript ends the step in progress ARGV[2] of the map of epoch
// ARGV[1]: the map becomes ARGV[3] at the next epoch, the step is
// removed and an event is added to the events stream KEYS[2] (which
// readers wait on). It returns 1, or 0 when the step is not in progress
// at that epoch (another process published it).
var publishScript = rueidis.NewLuaScript(`
local o = redis.call('HMGET', KEYS[1], 'epoch', 'op')
if o[1] ~= ARGV[1] or o[2] ~= ARGV[2] then return 0 end
local e = tostring(tonumber(ARGV[1]) + 1)
redis.call('HSET', KEYS[1], 'epoch', e, 'map', ARGV[3])
redis.call('HDEL', KEYS[1], 'op')
redis.call('XADD', KEYS[2], 'MAXLEN', '~', '100', '*', 'epoch', e)
return 1
`)

// claimScript takes over, for a sharded ReadGroup with Claim, the
// entries of the stream KEYS[1] pending in group ARGV[1] for at least
// ARGV[3] ms, for consumer ARGV[2], in ID order, at most ARGV[4] of them
// (0: no cap): XPENDING with IDLE lists them, 100 at a time, with their
// delivery counts, and XCLAIM with the same min idle time takes them, as
// Redis 8.4's XREADGROUP CLAIM would (Redis 7 has none). A script runs
// at one instant, so XCLAIM takes every row listed, but for entries
// deleted from the stream, which it drops from the PEL and leaves out of
// its reply. It returns {entries as XCLAIM replies them, the delivery
// count of each before the claim}.
var claimScript = rueidis.NewLuaScript(`
local want = tonumber(ARGV[4])
local es, ns = {}, {}
local start = '-'
while want == 0 or #es < want do
  local n = 100
  if want ~= 0 and want - #es < n then n = want - #es end
  local rows = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], start, '+', n)
  if #rows == 0 then break end
  local ids, counts = {}, {}
  for i, r in ipairs(rows) do
    ids[i] = r[1]
    counts[r[1]] = r[4]
  end
  local got = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], unpack(ids))
  for _, e in ipairs(got) do
    es[#es + 1] = e
    ns[#ns + 1] = counts[e[1]]
  end
  if #rows < n then break end
  start = '(' .. rows[#rows][1]
end
return {es, ns}
`)
