"""Write one test result as a subunit v2 stream on stdout.

usage: subunit_result.py TEST_ID EXIT_CODE [LOG_FILE]
       subunit_result.py TEST_ID skip REASON

For checks that are commands rather than test suites (flake8, shellcheck, a step of the e2e
stage): exit code 0 is a pass, anything else a failure carrying the log as traceback; ``skip``
records a check left out on purpose, with its reason.
"""

import sys

import subunit


def write_result(stream, test_id, status, text=b""):
    """One result (``success``, ``fail`` or ``skip``) with ``text`` as its details."""
    out = subunit.StreamResultToBytes(stream)
    out.status(test_id=test_id, test_status="inprogress")
    if text:
        out.status(test_id=test_id, file_name="reason" if status == "skip" else "traceback",
                   file_bytes=text if isinstance(text, bytes) else text.encode("utf-8"),
                   mime_type="text/plain; charset=utf8", eof=True)
    out.status(test_id=test_id, test_status=status)


def main(argv):
    test_id, rc = argv[1], argv[2]
    if rc == "skip":
        write_result(sys.stdout.buffer, test_id, "skip", argv[3])
        return 0
    log = open(argv[3], "rb").read() if len(argv) > 3 else b""
    write_result(sys.stdout.buffer, test_id, "success" if int(rc) == 0 else "fail", log)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
