# Shared by this folder's apply_*.py: each writes a measurement patch's form of
# moe_sel_kernels.cu by replacing text that must occur exactly once in it.
class Source:
    def __init__(self, path):
        self.text = open(path).read()

    def replace(self, old, new):
        assert self.text.count(old) == 1, old
        self.text = self.text.replace(old, new)

    def write(self, path):
        open(path, "w").write(self.text)
