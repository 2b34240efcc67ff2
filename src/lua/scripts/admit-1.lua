--[[
  Before a job is sent, on its own (CircuitBreaker.admit): the breaker's admit, for a job whose
  customer is not known (any job may be a trial).

  Input:
    KEYS[1] state
  Output:
    {verdict, nextProbeAt}: verdict go | trial | wait
]]
--- @include "admit"
local verdict, at = admit(KEYS[1], 0, {})
return {verdict, at}
