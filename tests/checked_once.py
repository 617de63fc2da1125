"""The call counter of the tests that a unit's public door checks its inputs once (``test_api_checked_once.py``)."""


def counted_checks(monkeypatch, original, modules, attribute="check_array", raising=True):
    """Patch ``attribute`` of each of ``modules`` with ``original`` that also notes the name each call checks
    (its second argument); returns the list of names, in call order."""
    calls = []

    def counting(value, name, *args, **kwargs):
        calls.append(name)
        return original(value, name, *args, **kwargs)

    for module in modules:
        monkeypatch.setattr(module, attribute, counting, raising=raising)
    return calls
