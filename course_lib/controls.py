"""One look for the sliders of an explorer: whole descriptions, one width.

ipywidgets gives every description a fixed width (about ten characters) and cuts longer ones
("lrate / def..."); sliders of an explorer then also start and end at different places.
:func:`aligned` gives the controls of one explorer the description width of the longest one and one
total width, never wider than the output area.

It needs only what every ipywidgets control has (``description``, ``style``, ``layout``), so the example
holds without ipywidgets too (a GPU machine's image may lack it):

>>> from types import SimpleNamespace as Control
>>> def slider(description):
...     return Control(description=description, style=Control(), layout=Control())
>>> a, b = aligned(slider("K"), slider("lrate / default"))
>>> a.style.description_width, b.style.description_width, a.layout.width == b.layout.width
('10em', '10em', True)
"""

from __future__ import annotations

__all__ = ["aligned"]

#: Width of one description character, in em (descriptions are short, mostly lower case).
_EM_PER_CHAR = 0.6
#: Width of the slider's track and readout, in em.
TRACK_EM = 18.0


def aligned(*controls, track_em: float = TRACK_EM):
    """Give ``controls`` (ipywidgets with a ``description``) one description width and one total width.

    Parameters
    ----------
    *controls : ipywidgets.Widget
        Sliders, check boxes, drop-downs... of one explorer.
    track_em : float
        Width of the part after the description, in em.

    Returns
    -------
    tuple
        The same controls (changed in place), for ``a, b = aligned(a, b)``.
    """
    if not controls:
        raise ValueError("aligned() needs at least one control")
    longest = max(len(str(getattr(c, "description", ""))) for c in controls)
    description_em = round(_EM_PER_CHAR * longest + 1.0, 1)
    for control in controls:
        control.style.description_width = f"{description_em:g}em"
        control.layout.width = f"{description_em + track_em:g}em"
        control.layout.max_width = "100%"
    return controls
