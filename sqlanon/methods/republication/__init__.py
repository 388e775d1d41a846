"""Publishing a table again: m-invariance (Xiao and Tao 2007) and the intersection check."""
