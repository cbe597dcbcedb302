"""protocol.lineendings: a converted checkout is told from a stray CR."""

from git_gasp.protocol.lineendings import crlf_converted


def test_every_line_crlf_is_a_converted_checkout():
    assert crlf_converted(b'{"a":1}\r\n{"b":2}\r\n')
    assert crlf_converted(b'{"a":1}\r\n')


def test_lf_text_or_a_single_stray_cr_is_not():
    assert not crlf_converted(b"")
    assert not crlf_converted(b'{"a":1}\n{"b":2}\r\n')
    assert not crlf_converted(b'{"a":1}\n')
    assert not crlf_converted(b"no newline at all\r")


def test_the_fix_quotes_path_names_taken_from_the_repo():
    from git_gasp.protocol.lineendings import lf_fix

    fix = lf_fix(["state/events.jsonl", "a b;$(rm -rf ~)"])
    assert "checkout -- state/events.jsonl 'a b;$(rm -rf ~)'" in fix
