// Package figures draws the figures of figures.yaml (reportspec.Figure)
// from a folder's measurements (dataset.Set): the panels and series each
// shows, cells of one device code pooled into one series, then SVG and PNG
// through gonum/plot; and the tuning curves of a tuning folder (Curves).
package figures
