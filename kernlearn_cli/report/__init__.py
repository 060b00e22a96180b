"""Results for people: per-cell records -> tables (CSV, Markdown, LaTeX), filled documents and figures.

One job per module, in one-way layers (each imports only those above it)::

    records   reading the records of results folders and archives (and what the grids expect)
    show      one cell, or the cells of a folder, for a person (``kernlearn show``)
    tables    aggregation: the long table and a paper's table of one metric, with their notes
    formats   writing a table's files: one entry of ``WRITERS`` per format
    markers   filling a ``<!-- kernlearn:NAME -->`` block of a Markdown file
    collect   ``kernlearn collect``: records -> tables -> files
    tidy      ``kernlearn collect --tidy``: one row per cell and metric, every setting and the environment
    labels    what a figure says: axis and legend labels, curve order and styles (no matplotlib)
    figures   drawing (the only module that imports matplotlib)
    html      ``kernlearn report``: one self-contained HTML page (tables, figures, histories, provenance)
"""
