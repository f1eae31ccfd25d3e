"""A Runplane worker written with the official runpod-python SDK, unchanged from a RunPod worker.

The handler is a generator function: runpod-python streams a handler's results only when the
handler itself is one (a plain function returning a generator gives an output it cannot send).
Each value it yields is a stream chunk (read with /stream); with "return_aggregate_stream" the
job's output (/status, /runsync) is the list of all chunks.

Job input:
  {"echo": X}                  output [X]
  {"sleep_s": n}               sleeps n seconds first
  {"stream": n}                n chunks {"i": k}; output [{"i": 0}, ..., {"i": n-1}]
  {"fail": "msg"}              the job fails with an error containing "msg"
"""
import time

import runpod


def handler(job):
    job_input = job["input"]
    if "fail" in job_input:
        raise RuntimeError(str(job_input["fail"]))
    time.sleep(float(job_input.get("sleep_s", 0)))
    if "stream" in job_input:
        for i in range(int(job_input["stream"])):
            yield {"i": i}
        return
    yield job_input.get("echo", "ok")


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
