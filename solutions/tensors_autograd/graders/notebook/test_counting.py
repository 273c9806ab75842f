assert tinynet_count(3, 8, 2) == 50, "TinyNet(3, 8, 2): 3*8 + 8 + 8*2 + 2 = 50 parameters"
assert tinynet_count(3, 8, 2) == sum(p.numel() for p in TinyNet(3, 8, 2).parameters())
assert growth(3, 2, 8, 32) == 144, "hidden 8 -> 32 adds 144 parameters"
assert growth(3, 2, 32, 8) == -144, "shrinking is negative"
