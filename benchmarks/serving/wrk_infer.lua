-- wrk script: POSTs one KServe v2 inference request (a file made by bench_serving.py) on every
-- connection and prints a one-line JSON summary at the end (latencies in microseconds).
-- usage: wrk -t1 -cC -dDs --timeout 5s -s wrk_infer.lua URL -- BODY_FILE HEADER_LEN   (or: URL -- GET)
local body_file, header_len

function init(args)
  body_file = args[1]
  header_len = args[2]
  if body_file == "GET" then  -- a bodiless GET (the health endpoint: the loopback round-trip floor)
    wrk.method = "GET"
    return
  end
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  if header_len and header_len ~= "json" then
    wrk.headers["Content-Type"] = "application/octet-stream"
    wrk.headers["Inference-Header-Content-Length"] = header_len
  else
    wrk.headers["Content-Type"] = "application/json"
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p90_us": %d, ' ..
    '"p99_us": %d, "max_us": %d, "mean_us": %.1f, "err_connect": %d, "err_read": %d, ' ..
    '"err_write": %d, "err_status": %d, "err_timeout": %d}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
