"""A Runplane worker written with the official runpod-python SDK, unchanged from a RunPod worker.

Job input:
  {"echo": X}                  output X
  {"sleep_s": n}               sleeps n seconds first
  {"stream": n}                a generator: n chunks {"i": k}, read with /stream
  {"fail": "msg"}              the job fails with error "msg"
"""
import time

import runpod


def handler(job):
    job_input = job["input"]
    if "fail" in job_input:
        return {"error": str(job_input["fail"])}
    time.sleep(float(job_input.get("sleep_s", 0)))
    if "stream" in job_input:
        return stream(int(job_input["stream"]))
    return job_input.get("echo", "ok")


def stream(n):
    for i in range(n):
        yield {"i": i}
        time.sleep(0.1)


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler})
