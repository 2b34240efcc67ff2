--[[
  Before a job is sent, on its own (CircuitBreaker.admit): the breaker's admit.

  Input:
    KEYS[1] state
  Output:
    {verdict, nextProbeAt}: verdict go | trial | wait
]]
--- @include "admit"
local verdict, at = admit(KEYS[1])
return {verdict, at}
