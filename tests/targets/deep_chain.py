# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fixture: a call chain 200 deep.

link_000 calls link_001, ..., link_199 returns: 200 different functions on one stack
(deeper than the 64 nested uretprobes the kernel allows per thread). The chain runs
three times, so every link is 3/3 with the previous link as its only caller.

Generated once by a short loop; kept literal so every function has its own line.
"""


def link_000(n):
    return link_001(n) + 1


def link_001(n):
    return link_002(n) + 1


def link_002(n):
    return link_003(n) + 1


def link_003(n):
    return link_004(n) + 1


def link_004(n):
    return link_005(n) + 1


def link_005(n):
    return link_006(n) + 1


def link_006(n):
    return link_007(n) + 1


def link_007(n):
    return link_008(n) + 1


def link_008(n):
    return link_009(n) + 1


def link_009(n):
    return link_010(n) + 1


def link_010(n):
    return link_011(n) + 1


def link_011(n):
    return link_012(n) + 1


def link_012(n):
    return link_013(n) + 1


def link_013(n):
    return link_014(n) + 1


def link_014(n):
    return link_015(n) + 1


def link_015(n):
    return link_016(n) + 1


def link_016(n):
    return link_017(n) + 1


def link_017(n):
    return link_018(n) + 1


def link_018(n):
    return link_019(n) + 1


def link_019(n):
    return link_020(n) + 1


def link_020(n):
    return link_021(n) + 1


def link_021(n):
    return link_022(n) + 1


def link_022(n):
    return link_023(n) + 1


def link_023(n):
    return link_024(n) + 1


def link_024(n):
    return link_025(n) + 1


def link_025(n):
    return link_026(n) + 1


def link_026(n):
    return link_027(n) + 1


def link_027(n):
    return link_028(n) + 1


def link_028(n):
    return link_029(n) + 1


def link_029(n):
    return link_030(n) + 1


def link_030(n):
    return link_031(n) + 1


def link_031(n):
    return link_032(n) + 1


def link_032(n):
    return link_033(n) + 1


def link_033(n):
    return link_034(n) + 1


def link_034(n):
    return link_035(n) + 1


def link_035(n):
    return link_036(n) + 1


def link_036(n):
    return link_037(n) + 1


def link_037(n):
    return link_038(n) + 1


def link_038(n):
    return link_039(n) + 1


def link_039(n):
    return link_040(n) + 1


def link_040(n):
    return link_041(n) + 1


def link_041(n):
    return link_042(n) + 1


def link_042(n):
    return link_043(n) + 1


def link_043(n):
    return link_044(n) + 1


def link_044(n):
    return link_045(n) + 1


def link_045(n):
    return link_046(n) + 1


def link_046(n):
    return link_047(n) + 1


def link_047(n):
    return link_048(n) + 1


def link_048(n):
    return link_049(n) + 1


def link_049(n):
    return link_050(n) + 1


def link_050(n):
    return link_051(n) + 1


def link_051(n):
    return link_052(n) + 1


def link_052(n):
    return link_053(n) + 1


def link_053(n):
    return link_054(n) + 1


def link_054(n):
    return link_055(n) + 1


def link_055(n):
    return link_056(n) + 1


def link_056(n):
    return link_057(n) + 1


def link_057(n):
    return link_058(n) + 1


def link_058(n):
    return link_059(n) + 1


def link_059(n):
    return link_060(n) + 1


def link_060(n):
    return link_061(n) + 1


def link_061(n):
    return link_062(n) + 1


def link_062(n):
    return link_063(n) + 1


def link_063(n):
    return link_064(n) + 1


def link_064(n):
    return link_065(n) + 1


def link_065(n):
    return link_066(n) + 1


def link_066(n):
    return link_067(n) + 1


def link_067(n):
    return link_068(n) + 1


def link_068(n):
    return link_069(n) + 1


def link_069(n):
    return link_070(n) + 1


def link_070(n):
    return link_071(n) + 1


def link_071(n):
    return link_072(n) + 1


def link_072(n):
    return link_073(n) + 1


def link_073(n):
    return link_074(n) + 1


def link_074(n):
    return link_075(n) + 1


def link_075(n):
    return link_076(n) + 1


def link_076(n):
    return link_077(n) + 1


def link_077(n):
    return link_078(n) + 1


def link_078(n):
    return link_079(n) + 1


def link_079(n):
    return link_080(n) + 1


def link_080(n):
    return link_081(n) + 1


def link_081(n):
    return link_082(n) + 1


def link_082(n):
    return link_083(n) + 1


def link_083(n):
    return link_084(n) + 1


def link_084(n):
    return link_085(n) + 1


def link_085(n):
    return link_086(n) + 1


def link_086(n):
    return link_087(n) + 1


def link_087(n):
    return link_088(n) + 1


def link_088(n):
    return link_089(n) + 1


def link_089(n):
    return link_090(n) + 1


def link_090(n):
    return link_091(n) + 1


def link_091(n):
    return link_092(n) + 1


def link_092(n):
    return link_093(n) + 1


def link_093(n):
    return link_094(n) + 1


def link_094(n):
    return link_095(n) + 1


def link_095(n):
    return link_096(n) + 1


def link_096(n):
    return link_097(n) + 1


def link_097(n):
    return link_098(n) + 1


def link_098(n):
    return link_099(n) + 1


def link_099(n):
    return link_100(n) + 1


def link_100(n):
    return link_101(n) + 1


def link_101(n):
    return link_102(n) + 1


def link_102(n):
    return link_103(n) + 1


def link_103(n):
    return link_104(n) + 1


def link_104(n):
    return link_105(n) + 1


def link_105(n):
    return link_106(n) + 1


def link_106(n):
    return link_107(n) + 1


def link_107(n):
    return link_108(n) + 1


def link_108(n):
    return link_109(n) + 1


def link_109(n):
    return link_110(n) + 1


def link_110(n):
    return link_111(n) + 1


def link_111(n):
    return link_112(n) + 1


def link_112(n):
    return link_113(n) + 1


def link_113(n):
    return link_114(n) + 1


def link_114(n):
    return link_115(n) + 1


def link_115(n):
    return link_116(n) + 1


def link_116(n):
    return link_117(n) + 1


def link_117(n):
    return link_118(n) + 1


def link_118(n):
    return link_119(n) + 1


def link_119(n):
    return link_120(n) + 1


def link_120(n):
    return link_121(n) + 1


def link_121(n):
    return link_122(n) + 1


def link_122(n):
    return link_123(n) + 1


def link_123(n):
    return link_124(n) + 1


def link_124(n):
    return link_125(n) + 1


def link_125(n):
    return link_126(n) + 1


def link_126(n):
    return link_127(n) + 1


def link_127(n):
    return link_128(n) + 1


def link_128(n):
    return link_129(n) + 1


def link_129(n):
    return link_130(n) + 1


def link_130(n):
    return link_131(n) + 1


def link_131(n):
    return link_132(n) + 1


def link_132(n):
    return link_133(n) + 1


def link_133(n):
    return link_134(n) + 1


def link_134(n):
    return link_135(n) + 1


def link_135(n):
    return link_136(n) + 1


def link_136(n):
    return link_137(n) + 1


def link_137(n):
    return link_138(n) + 1


def link_138(n):
    return link_139(n) + 1


def link_139(n):
    return link_140(n) + 1


def link_140(n):
    return link_141(n) + 1


def link_141(n):
    return link_142(n) + 1


def link_142(n):
    return link_143(n) + 1


def link_143(n):
    return link_144(n) + 1


def link_144(n):
    return link_145(n) + 1


def link_145(n):
    return link_146(n) + 1


def link_146(n):
    return link_147(n) + 1


def link_147(n):
    return link_148(n) + 1


def link_148(n):
    return link_149(n) + 1


def link_149(n):
    return link_150(n) + 1


def link_150(n):
    return link_151(n) + 1


def link_151(n):
    return link_152(n) + 1


def link_152(n):
    return link_153(n) + 1


def link_153(n):
    return link_154(n) + 1


def link_154(n):
    return link_155(n) + 1


def link_155(n):
    return link_156(n) + 1


def link_156(n):
    return link_157(n) + 1


def link_157(n):
    return link_158(n) + 1


def link_158(n):
    return link_159(n) + 1


def link_159(n):
    return link_160(n) + 1


def link_160(n):
    return link_161(n) + 1


def link_161(n):
    return link_162(n) + 1


def link_162(n):
    return link_163(n) + 1


def link_163(n):
    return link_164(n) + 1


def link_164(n):
    return link_165(n) + 1


def link_165(n):
    return link_166(n) + 1


def link_166(n):
    return link_167(n) + 1


def link_167(n):
    return link_168(n) + 1


def link_168(n):
    return link_169(n) + 1


def link_169(n):
    return link_170(n) + 1


def link_170(n):
    return link_171(n) + 1


def link_171(n):
    return link_172(n) + 1


def link_172(n):
    return link_173(n) + 1


def link_173(n):
    return link_174(n) + 1


def link_174(n):
    return link_175(n) + 1


def link_175(n):
    return link_176(n) + 1


def link_176(n):
    return link_177(n) + 1


def link_177(n):
    return link_178(n) + 1


def link_178(n):
    return link_179(n) + 1


def link_179(n):
    return link_180(n) + 1


def link_180(n):
    return link_181(n) + 1


def link_181(n):
    return link_182(n) + 1


def link_182(n):
    return link_183(n) + 1


def link_183(n):
    return link_184(n) + 1


def link_184(n):
    return link_185(n) + 1


def link_185(n):
    return link_186(n) + 1


def link_186(n):
    return link_187(n) + 1


def link_187(n):
    return link_188(n) + 1


def link_188(n):
    return link_189(n) + 1


def link_189(n):
    return link_190(n) + 1


def link_190(n):
    return link_191(n) + 1


def link_191(n):
    return link_192(n) + 1


def link_192(n):
    return link_193(n) + 1


def link_193(n):
    return link_194(n) + 1


def link_194(n):
    return link_195(n) + 1


def link_195(n):
    return link_196(n) + 1


def link_196(n):
    return link_197(n) + 1


def link_197(n):
    return link_198(n) + 1


def link_198(n):
    return link_199(n) + 1


def link_199(n):
    return n


def main():
    for i in range(3):
        print("chain", link_000(i))


if __name__ == "__main__":
    main()
