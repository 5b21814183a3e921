"""Write one test result as a subunit v2 stream on stdout.

usage: subunit_result.py TEST_ID EXIT_CODE [LOG_FILE]

For checks that are commands rather than test suites (flake8, shellcheck):
exit code 0 is a pass, anything else a failure carrying the log as traceback.
"""

import sys

import subunit


def main(argv):
    test_id, rc = argv[1], int(argv[2])
    log = open(argv[3], "rb").read() if len(argv) > 3 else b""
    out = subunit.StreamResultToBytes(sys.stdout.buffer)
    out.status(test_id=test_id, test_status="inprogress")
    if log:
        out.status(test_id=test_id, file_name="traceback", file_bytes=log,
                   mime_type="text/plain; charset=utf8", eof=True)
    out.status(test_id=test_id, test_status="success" if rc == 0 else "fail")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
