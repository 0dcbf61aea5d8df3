#!/usr/bin/env python3
"""gfxhound repro 0c391d7adf66e9f7: miscompile of a kernel found on device (cuda:90, triton-3.6.0).

out_0 (i32, atomic): 1 of 4 elements wrong; [0] expected 2, got 1

Run:   python repro.py               exit 0 = results correct, 1 = still wrong, 125 = cannot test here
       python repro.py --interpret   run under TRITON_INTERPRET=1 on the CPU
       python repro.py --show        print the child's output
Needs: triton and torch. The expected values come from gfxhound's torch reference with per-element bounds
(docs/tolerance.md); elements the reference cannot determine are not compared.
"""
import base64
import io
import os
import subprocess
import sys
import tempfile
import zlib

GRID = (1, 1, 1)
OPTIONS = {'num_warps': 16, 'num_stages': 1}
ENV_KNOBS = {}
ARGS = [{'name': 'in_0', 'kind': 'ptr', 'type': '*fp16', 'value': 342}, {'name': 's_in_0_0', 'kind': 'int', 'type': 'i32', 'value': 3}, {'name': 's_in_0_1', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'in_1', 'kind': 'ptr', 'type': '*fp16', 'value': 96}, {'name': 's_in_1_0', 'kind': 'int', 'type': 'i32', 'value': 16}, {'name': 's_in_1_1', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'in_2', 'kind': 'ptr', 'type': '*fp16', 'value': 342}, {'name': 's_in_2_0', 'kind': 'int', 'type': 'i32', 'value': 57}, {'name': 's_in_2_1', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'in_3', 'kind': 'ptr', 'type': '*i64', 'value': 128}, {'name': 's_in_3_0', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'in_4', 'kind': 'ptr', 'type': '*fp16', 'value': 1824}, {'name': 's_in_4_0', 'kind': 'int', 'type': 'i32', 'value': 16}, {'name': 's_in_4_1', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'out_0', 'kind': 'ptr', 'type': '*i32', 'value': 16}, {'name': 'out_1', 'kind': 'ptr', 'type': '*fp32', 'value': 3648}, {'name': 's_out_1_0', 'kind': 'int', 'type': 'i32', 'value': 16}, {'name': 's_out_1_1', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'out_2', 'kind': 'ptr', 'type': '*fp32', 'value': 228}, {'name': 's_out_2_0', 'kind': 'int', 'type': 'i32', 'value': 1}, {'name': 'M', 'kind': 'int', 'type': 'i32', 'value': 57}, {'name': 'N', 'kind': 'int', 'type': 'i32', 'value': 16}, {'name': 'K', 'kind': 'int', 'type': 'i32', 'value': 3}, {'name': 'BLOCK_M', 'kind': 'constexpr', 'type': 'constexpr', 'value': 64}, {'name': 'BLOCK_N', 'kind': 'constexpr', 'type': 'constexpr', 'value': 32}, {'name': 'BLOCK_K', 'kind': 'constexpr', 'type': 'constexpr', 'value': 32}]
TIMEOUT_S = 120
DATA = 'eNrtXXl8FdX1v3mTBQKSgGwiy0MWAyK8LCQEw8wwxChGaoxbVJQXIJhoSBh4gIro80VQ29ri0latpc+6tNXWX9y1hmZ4RMWliIqK4vIKuKPsqyy/mbnne/PuBKHg749+Pr88O0xm5p5zz/o9595J88pKlWTGOnRgbT6ZrBurnD2tumZe1ajplaHKkbOuqS0xurDLpE/Yt9BkWRVpNsHUuTNmVM2eYyYtNH1ZFTZXVlM3JWAq00L1NpuRU+aGamrnpE+ZXTV1bk3t9Cmhqro59bOnzMtJN5OzOIc59sjKq6rMFE6SfnZl7YwL+L10M7UiyR4SMNMqFPs8bdZcs0Pp4yGz4/mlrPTxRWZ6adIis9Pt06bV19ZWTQvV1NfNST9v9vSq2VXTi2umhdLNzsPKzRNCZpdyMwPCZZuZ1fbc1SnVnHm22bW6Q2kgZHZzmAYWmSc6TLvfXu3Q9giZPcvNXqDNMXtLtDnmSdWuQH1IoJMd2r6ctl/I7F9uDgBtrunntKTnufV1Vwk9B7rscs1TbHaZIXOQwy5zkTnYYTeEsxsaMk8tN4WN88xhkih55vDqDpOWKCHzNJvY/mGROcKhPp1TjwyZo8rNQEWKPbR+bsh2UbYkzcS6kBAmx2U42sy1hUkOmXmOMMmLzNEOu3zOriBkjik3CwW7bHOsxK6ktr6yleEZLsN8s4gkHAcJVYelxlnqIXN8uWkIljnmBFKQkxeYxbY8hSHzTEeewkVmiUN8Fic+O2ROLDfPmVvhxHTVtbPsYKiabpYuNM/Nqs5eaE7KclnMM39GLLm9x5jncRXLSMXzHZblnOUFIfPCcvMid2CVebGkXnH93Km1VUK/S9xBhWYF53YpcbvM4XY55zY5ZF5Rbl7phvHUyunmFImfUV9fK7gFK3xOWAbMSs5uKrGb5rCbztlVhcwZ5eZVbgLNn10TsvPKrCbdiD7brOH0VxP9NQ59LaefGTLrys16N5hm1k+vMmdVpNo/VobqZ9ZMM033/oya2lpzdimbWz12oTknqxq2u4TzzzFD5M65cOc8Z4b5fIZrQ+Z15eb11RfLVLnmAqK6AVQLHaobOdVNITNcbt5cPUXWJc+MEFUDqG5xqBZxqsUh89Zy87ZqjwVGm7cT1c9B9QuH6pec6o6Q+aty89fVs9yQc2CoylxS7So8YaF5ZxuF8827eADeTQF4j8PsN5zZb0Pm78rNe73qFpj3cZr7ieb3Ds0DnOYPIXNpuflHr7JjzCineZBo/uTQPMRpHg6Zj5Sbj3pVLTT/zGn+QjR/dWge4zQ2Pv2t3Px79axqrt5cV+HZVZXTqs0nFpr/k4DbjaWzW3HyyUnxlFbke2pSU/dWLHu6NLMViZ4pDVdnl7LqsfZ5Qmna3Lkjy0rTOoz99dLBp9hR5RxlP1pxerGTRMUZOaN+9szK0JR5dkWxsbzE6OEpPPTJdtg/v/njBiftnOPH2fdhBa3sqdRMqaytuapuZlVdqMTIPfwMR/7k5zkCaPPNrx3j+44oQFemCQGmXheqqnfKU4lxxvHMi0+tnfC1VY4Mi8ZtOMlJ3NQjytCFqVJVHxUoMcb+BAGsIn0ZmxA+w2+Ex7Jn2fiw/TOb4NdZU9iI69Hx0Qm6wUaEl0UtfXlQ11V9BfsbG8uet0e9yALRFWy0FYuO15viuqXFDWtCcLk94hnWYv0zbARXMGaNt2mW6TGrKDg+XKg3h8+IT2DPWqo/Zj99KlxoOedx4WXhf+jjostZDlsR/oft5+bwS+EX7bvL/DFLCxosJ2rZ914MT2CNfvsqvMzmGgvbdPHx4TPCy9iL4XFM1SdEx/vHx8fryyzN0sNNtoTNNs8AG8fy2XK9iD3PillMX24165pfDy63DL8V1pmmF/mtqBW02D/YU1HdlWZcVA9rtnx6cLzfiOr+FWy5tdw+DN2wVJtvjt+y51OZwZ73W7oeN9gy9kIwZl8XWCus5Y4/v0/9+diL7Yh2jiP5c6Tsz+wSY/gx+JMVMYs1sZh9WDY7w74uts/F7s/OvzH3Smct9rVl/1vkUjh3m+z/nFG6+9QZU+xS8xGWS6E7mjyRrl8atIcGjxKZg2VNckoM/1E1secwbDmK7dlirgSOPDFbAudesXvNZWH2wf9z5GMuVYtL7Uhv2f9apC/XTrdHOWOcf2OujTDWsRb4WcSj2L3X4s5t0HPmPuPzxVwJdVcqRzrd5c9cuzHXaq28ily7xtyZdZebQTblfnJouLc4D+4fyx3lSKe79EXu05hLqZPvWoSGjCxkubQ6yeDM5P7keO3S7tdefxzxl3ts8fdYw/AbV9t8DmQtz3jr0KFDE+7b8sqJ9vWqFw6t3Gxf/+HD/fOW2+cer0zLvMg+39PfSuppn18fUPXQo/b5gi2dF5TZ578fnP/yWKf3ze6z8h37/NeOj9wTs+/P7DbyxUr7PLfPpT+ss89nVf9+8pf28zuzGkOd7GtH05x1fbqF7Xvho8RnsqxpXonh2t5yLc69yrOCX8fcXGhyY6HIvVeU4GvD9UKTG7Ux12Mt7lgeBcx9prs+192RjOK6xY02Q4hlUJTzT8wdX+zOziiSLfdad2eAVFxOw5WLR2uMoobHJ3PjlsdnzI0fnlfFlGlNbjQxinxHwiLKDGCC5cYf17aIEAU5Ybl5UezKFyMdua5cF04Rc0dzdOHZaLj3uNVjrrSWK23MHc1tFyNKrrdFXuEjW4SdDbJ/zB3TQhmhu7ybXArm3m+iHOL5brkjmghRWuVFDumkWxPJz+3BbdpENmEuN4ueILcN8kgTYQWf0RKRxGVpovsG2Z/jiUE24Pa0CEF4brcI+Zgrt+FysQjnYxQX0I/jaAtZtNjFGT0heoqpLnCc44gHmTnaWERd7FrTotjmqMKjgvupiLzY4kppkDYG5QOPfvDTXUoumUE2t0iKJvdpMXlcJ7QGSnL/MlcPriWPdp2oiyhedddiHJNbhIWayK9NFLUG1RGD5jIIp1tcKl7/LPcnRH2R+6/uxktM5Crm5ygec2OW08fIdy2UDzHyeJMba/A7n9Gg/OBWZO5sRa5lm6gKtgjsiAl7W+JOCyEPRrZQTMDuBj0zRA3RyR6t2cJ9Z4jqhTqLWhWjGETMMLKu4UqGysRRySCM0EVl1d2xLeRvJjK3RehRTJnSJCKkWDwzqBtocmdpoQpdROhkEPagu2Guj3Qa30QWYeQvdBHgFyO9mcuZWwsZVUzxU0x6MtLQcOlaCMea3Ag3RFdiiJhB5jRRzgBnDMI2RvnDcw5IYlEs8VxpoiwzqN+Iifl0ca27ErYIvItRNhS5WukUdUWUt4w8AzshpwyaX6cZddFv8TxtcurryhfMv/jTGHOOY+j/Rv9H/Z/n48x3UelLmzLdHcwjz5cnz5dfYgSOeSVkG+Sm9qP9aD/aj/aj/Wg/2o/2o/1oP9qP9qP9ONrhrFdLry/tp3exF9hdjmn/ucDdf/5/YqOiv2z83UZb241HWdP7ZRuNKTH6HnFN72NH/jhzv1Dx1kC//bP/2N5fFR7P/sXh5v/7ReknHX3+DDbI8yYwUGIMYP/B/M4cfT8rHui8xE8+yhyaZ47sn/j+Oonmv+6FPfcdz/w5P3F+l220gO9tsY0a3+nqxq8D+Xzf0Z/Fr8Mp/BzNozPdt06l84m0UzaY+K1p5ufh9AZnJD8vGUPPT6HxA/j9sJ+f48NoPuy59eL3rZOJbhPnqw8kOvAZRXLRfP6h9Lwr0fXn16wjXa/lfMLJJB/pEyV9QK/3IHn6E52fn4OkT3A43e9A/GGHgCXNOyuProk/60x8e9D9k3SJn55Jevehc4DoTiS9+tJ98ld0JPHrQGeMIz5xspdF84Qz6ZxMdj6dn+NjaZ5edPZxuijmT+fnJbkkN/nb6kn8MkieMTTfEBpH9ghn0PU2io+veNyxTvx+I81fBv57m6U4ZB3J7oPIP2SvAOROhp5yXFk0fnU+yUl+ZDv4/GGSM5BDfMlO0UEePcgfYcQFzRc/he4rcnxDryjFtU7+1odZUhwwogvn0DXyrjc/b8nRJX/q5P/oaXT/dLomPyN/dYrjMvIHI3voyBvkVSr5cSBdd/Fcryc/beNnaxTpmwI56Ppk5BHN19OS7Bgc7NE7jeaBn070xFOSLtk13JXG9UT8WRJuCf8QXrGTLcnffrIP6wd/0rgTkGd0n/wUJLzzj5T120K4qfdE/tO5sZlwCLhKOAN8QNxgfuAM7Aw9xgBP+fPMXLpP+TOriOgoz1kvGS+E/Wl8EHiZTefe9Px78ivhgUXxFsA4hcatJD2AC91l3NQJf0TepcFeJFcW4fJY2e/AK9ghPprmixPOkx6Z44g+W8ZD4D3bTnqs5nTVBvEnP6yGPfvhPtmFcA9y+s8gft3oPIj0Gib7b0muLDfsGwUejkD+05ns6h9sSbhfBlwdJuOkv1CuF0twTfzCRXL8QS88z8zTpXyPU75DX9Qx5gP+kFze/Ie8J1hS/ul9dSn+rGzZ//GhxIfyEHiKOEP9Rn7ohGP6aDm+wjRPIFeX6rnVD3hH91EnUW/JXhbwr8CS8hzzxmGPZLnuhjt5/HmyB/fJfuFuMi77Ceej9Bx1h1ma7D/KI2sAzU/1Bf1QoECul9AX84t+gHDRny3PGyX7Q3+Wgrgiul1cnjj6BoqzzBwZT/1D5f4P/oT9GOUncCpIcRZOJblhp4Fy3QfeM+hP4/1UR+KUd+wQ+Qn9E+FInPSdlYt6DTyjeCKcsUieAOVLnOxsDZf7SvgvDPyC3bZocj9H9X5WQLavhXjN0KU+kO3j9EEaHz9VrjfREXK/1dp/kD2H8PuNdB+4EkTf/lWzVD/CSRTvZB/oIz7U54fRD+/34Dr6Y6rzbBjyTZfiKEp29A+R8V3Ea1dL7hcofkXfAPv09eRHitz3iH66hyyf1Rs4g/7UkuKOfUN6QW7qI5lF8Uf9Whz4hrpLcocJVxEnrLN8Bh4yqldYp4h1z4lynw0cR1+LfEFfweIa1V2i6yKvf5AHOuUH/M4o3vyoRwc0yT7QA/UefR/b1yz5Aesodoj8sJLiHv0Rk9c3wA/YuRH9QkfY05JwGXXKT3iI/qcMeL+L/IJ6i3oHuVZrUn+0OkeXxgMvRH0nXNNHyOu+MvQfiLe+cv/LdpPelB/+QR7cw/qM7qPPYVvJnj553YQ+B/kcRb/R19MH7tGkPAR/dlCuj2HKM32Mt4+V13sW4gT9PdZZwNFUuX9G/rBGTVrPWMSPHWiW8ANxrpM/yxB/OygecE19jkX+CAKnsJ7ar8n1tLu8LsY6VtQRxAPWBbAn8CxVxlf0Z5ALcca2NEvrSeQj7BUukPst9AGgD/qBy7pUj7BvgHWMqHe9UXdkHBP92GAZ91H//X4ZB1BH2Ag5D8NY13eS14WwE+wR96wjgR/4HSd/QO7bUb9EnO735A3iyhO3fvSfPTz55Vlviv6/C/JWrhthiiOL8EQf4dGL1ltBxHsvuS8V+0roP1Zq0npJxANwHX04xaGFfMF+0UC5bxH9scBRT31D/9TPU18p/rC+FHWpr9yHNWL9SXkTp3UM9smwH4f1Gdukyes2xB3ZIUh0jOJIJz11v7xfIdbnyM/TZJyJ++U+askYeb8MdZQd1KR6EKB6GR7g6ROygaNyX7q6SF7fWbTPwUgea6CnflM9srrK/Z8/IO8fwu9l2A9C/mG/ktabcYo/6Osf7dkHRT92mlxX4UeGfTe6LsvzrDdGIb7kPBbxP0K2U5DiQuwnYF+G6jP6BvSh8Gsc/kW/nSGvx4CzccJzP/ZBsb7vJq+z/MBh9C3ADdonRT/M+nvWmTubpTreivMk5yjPvnCG3A8B5/U+8voQ60DUJ1G3+sj1EPtvop+jeo/6xEbJ62HRB0OPIR49kNcr5bzT8+X+x8qX66s+TJf6PdRx9DPsFBmfw13I/zReP12up/AX8ldco68gvI0DP4kOfQ72yYKDPf5bQ/lI93XgGfmHYR+M+Oq95P1Jsf+B/idP7qeA68DHAOFtkOZB/RP1ahj0ozPlD/pigWMd5HrAdpKfR8j7ZWKdR/va4RGePCEcDI6T+zqsY4LoX/c0S3kcVOX6E0Q/gTzNkvfzsA6C/bAvp/f37D9letbN1O+zH+T3GeHB8voT/SnWn8ijMOajfXCs3zEe/veu0xHXQcTZ9map/8A+Hvaft2R79huBb73lvkPgO/o3wqP4cLleo46Jfpv8ZJEdUT8QD43Y96C6oGMf4VRLqut4n8B64n2IvH6Jkx469a94f4J1uui/UY96Yn2oS/vl2N8U+3TD5fiKkz30QnldEsyR41Tvqh++v9yrSX1dNEvOb7xfYOubpfcRjQWe90TAs7GIO/hTl/sq4BX1H8AJ9HWNeO/XHfllOe8+a3cueDXc14HxI7/7nOB595lbYmg/5d2n89k08/kLlQ86al2uiL/tiz+rfnPhc3f5dm1Qi75c428o7qDps1bMUKbtUztOT+6g3PKBuntK/Ve+X6dqd89+61pl8z41Ujf2UmXfXnXj5R+t9N3/uTrmyi8+8g3dpXJ+j6iQPljy7UDfL5g2cdsd8xo+SYdf2NNn78719dqqvnLuLy/wdd6mTr/2u0eUSfvp+h3i/7Xa/+b7v1Yu+149OxLdpkT/qU4oW1rn+3Sb2v3ipt/7inaonE+Stn7BIUsZcEDdNuPu/kruHnXm+Q/P9w3eoL5xZnU/X/UW9YJQxWKlYp36t3p9qqI/pk6dsmmDr/Z9dc2skmuUxftUbo+9gv6zqQcP+tQv1R0ldUN9T2wR+jz2yojBkQeY9sL1e59XPtwv7l9VsfLvvpUb1QdKF5/jeyVJw7y9P3vs35HLUjXlmixVydpLenxKdv2S5PpWBT9O/291/g2RlxXjO3XzpLsm+8p9Gvj//pa/JSeP2KyOuyT2sC+yUdVe/Z+sSDPTDpnnhpQ3P1JfumxNs+/Cz8mO69URF5y+yHfHdnX1/KsfVIZvEvehf/6Zn/f2ncm0TgtTXleqTiA5v1atCxpv9zW+q14+KaPCN8qn7bt21mPKrI/V1HU9YpGqFOHHj2pOGa2s/0o9e+L1Y3xj/63y+EjXcqvSuyqv7xb2wXPOdwX54R/qgwtvW6Xc9ok6Yr++oiFwgrbuw4wXIwNSNG6XN1TEIfw39LLzX/Jl71QHXT/vaeW5/eravXlPNjzcmeL4PY+e2yg+d6pDvplW0LC9g4b7fPzL5IfdanRNaElko6LdMPfKXytLv1XLLr+kxTd/pwo9uP6bhN9gv3cvOfOvvkd2kN3fE/pCr7Hzv3xASdsv4onz/0HEAffrGornZGFX7s9v1H5rFz8eeS5Zg99mNzz6g/LF9+rt4V6fKwUH1QeLp3b3ncI0X/mpN/jO2i7yd/FVPQcpF+9RB2y9dWbD71rzjuf5dvX1G3/1gbLqO3XyjMw+SuZa9bflj4V9V2+nfImLa+6vp4XfPp14oMh3RZIGXIAcO266J650/17kEef7lbDjv66s+cw3cZfQm8fZhxTf2wSOIJ54/r4r7Ip8xnNZnw0e/3xAcfWdiIMnzjv5at9L29TNi1/omfzCZjGeX38m8uzZyj07fXu+IHlTtR6v/HVA5DqmQb/g5oNTGkamk31b5Zh9Tni8L3yzChwCriIvwZf7qxVPgGfcvhvEfeDpk2s7NkY+TNb6nx0a5dsRV8uSr/Hd0idDu/PSVc/5unyuIl+BF7A/xq8tGzjHl7Sd7KdoiCvuZ0vMN2xO+UKl27fq3rcm10be9GmwO8/T+9WKmXllyjNfi/HATeA78o6P+1DEA+f7g/qr67Y/odzdWYPfYRfwW1l1Rw/luzSN2/FJ9fTakWcpdXvVwrR9vW95LUPj/vNp8BPszPOnReV0D6oP97js3tjA7tqkBTc0Kfv3q3O2331Tw6BO2km3/XNA8sHNKu5f0uLvFsls9evoGzu9qzx+ggY/cL47CE/2C/958Q/25fVxl/ryoqdOSJ59SOAaxj18xbT3fcougR9fvPHquZEPkgjnfhDjvgyt+7myoJOoF1t2PXJ/w85OGvhx/M8Q8Qe98Lzik4FrIltb5QM+QV/cB74Df3h8tOb/L4PbNvme2kXxGhf5B/xB/HGcUIT/669+pFBJ2Uv2el8FnnrjHfnBcegA4WOakA917qwPf/lMZH+yhvl5vdqiAu+4Pzept5+1dbjv7S3q5btO+W3DO500jhN71Gs31U9suKmjhjzHvOGXh54cuZiJuoG6y+PhU+FP9B/wG/CE4/VGUU+5336getlad3hc3tnqH8ojjqNbyU67VPRDG77dVNwwuaOGegl9Mb/cD6xRkReY98yaPwaU5j0q9IcfEFccl1eqa17NOT2ynmlcnr1q+pqtv4gsVzTgKfog4Cn4wH6IT+DUTRcV/s530g61sbrvCOWBtQLXEVeoH7jP8WmLqD88/w6o10++4l++ZTvp+Wp1YOXcrb73UkVc8H5G0cyP7loWMVJEvQae8b6gs8b7ox3qUKVqb8OaLhrHl92EkweEX+G/R+dNv1fZ+C3Jv0fEK/o5xMmCN885P7IvScQXz5MvRP+DPo3XlzfVwLkdz/N9naT1rF92hdJvn6g3gUWjOiafd0jgt7f/CE27WVEqd6vb3w//KTIrWQOurKh9slS5s6OG/gn5hHp5x+rPZkU2+zToAz3gN/SzvA6vEvGI/gp+Ai4h/uD/pdNv7az8ebdaOnXBPt/JuwW+Q3+OBxsEH9Cjb0B/KtfNOwV/1CfYEX0T5EOdAs6gP0Xccbs3iTqLPhLzIC54XO0SeXzSefdW+e5dT/7/SsQJ+hWcgYeQH+sUrHsgN+IKeYK+FvmCvgL1DnWX+yfeuv6hPABOwu+o7wcqSp/yfZtM+PaWsA/0gD3R9yEu4QesozAP6j3Po01t1jfAD9j53Heqb4xUKBRv64Q9gcuoU1zOHcIvwzdoSQ3npQk8Al7yOtJZk+PjQdEf3faB8ufI3ckaxgMvUAe5/Wy7unXqoIibun3PP9vwamcNcQD+wB/up9eon9ki5EVcYjyveztFn8PjJkZ6rxHrJvQ5yOdNLQ/1jOQyDXUNduD2fl3kIfhzPGv1O/fjPlqvpmvePhbxxnHtoOh/ES9efXGN/EH/in6B4/R6FXEF/ECcQ07ENdZT96+795XIbSmij+Z1mWnok7DeAv6gnvL11BeiziE+US8Qp9ze74h1D/AMegFfZdx7WcQt7iMukI+wF/dDR9FvoQ8APcfzrQKXUY9QL7GOAf4hH4EnmNfbjyFOUP9TS5US30NbBQ6gjsh+XCnqFvoWrMdgJ9iD+7V1HQn8AD8+X5Loh4ETiFP4C+MRV6hfiAfe56YK/8MvsC+u0f+j30Tewm7c/yka9jmQz9AL8Trlpq4fK1sPeOT4XMQV9j+AaxgH+wHXuR1b+3Be11M17Behj0Hfgv7Yi6Pe+ibXoXXiPtaXwCNe3zeLPmx8vPGbSDRVw7p12Zz3blZGd9KwT4b9OOiF/THvPgTyp+u8f9+tLP/Bs778gvreraI/levdKoqrgwJnFv2sR6Vv7jYRz9jXQ51GHQV+oR78Zn3T/siINOprt4o+AfIAR9GXZqTuyLilIUPD+g77VFzOA2J/AvxRj8AXdR5xDfvA729/ecmQhqs6aBx3don9JF5HMjReV1I06Mv7nTQNdkf/hvhDvsCPXJ9t4jry6amfRApSRR+JfUvEF/IY8c/rxCGhD++vk8U+H/ZlYD/0DejD4FfIj7j15j3iFXX0vmseN5TSvWLfDesB1POLL8z9le/d7Sr6lvI3is+OPJMkcBj9MPY/UQ85Hrwi6rgX57NeV7VIXZKGdRD0gF7gj74EdRTrQNQn1C3EK+oh4lPef3pN1CduFybWVfAD9MA6DXqg/iL/kHe83+mgwV58ndBB1Ffs/6HfAx/0M/AL/AT9ef1UaB/jkNjXgb+Qv7hGX4G++NLFo7sl/+aQiEv0OcBl7M/Bf6jz6JOxn4j8Ff0Z4TLfr/la7A9AHuxvI2/QTwHXgY/ff/Lw2kj3VK1v9X2nKtftUVH/UK+wHoF+NSufzY6kJGnojxDvkAs4D39h/YT7WOdhXxv5hjxBnPA6nakhjrGO4euzNA12Rh7z9wOZYp8Z6zV5X3dfmzyE/bCOhX+w/yTHxRbRl3E7/0vsRwPPgEfAVaw/kUfoN9EfYf2O8fC/d52OuOZ67RX7b+g/sI+HeJn3bt2tkaWKBr2QV1iXAJ+B7+hXsP/G30scELiNOoZ+G34CzqJ+CPzbnfXHht6dNdQl7FvCHqjrwH/sW+N9CNYv6PM4juwW9sY6HXGKuAYf9G/YRwFuevfpEF8cr320D4B9wNcE/iNO+bp//Y/0l2+IeMH7OuS3PN/TAo8Kvt9zccNXHcU+HvAM+ymIA/gTfZV4v0P1FX5HX/fptswFDayT5o1f5/1nyYVZdx/P+8+8/4P3n6z90/5p//zXfBw8CG2pPH+JwphzHAkPcj14MLrEGHWseJDU/mn/tH/+az5O/v/hkgdjx5P/+ceR/9L/v43tuSnhHL5osvv7Wzh7n/s/Xonf4/J+MO6Mw9F5z/HO2ed4xvkPd22tGmf8J/xwjo5a5P6eXHBpNDVRTv296d7//6uk74/x8crjf6j+LP3w9nCvMU/8mmcu9NC79k64Dzngh8P64zD2LxZ8nbi54l+D8lcmMbYy6chxc4YnbgpKjAJ2/P1jb9tEqneWP+2sfuSiye+rOHufz9j5aenH9nrpxythOIuxb9Wj1cvm/c/u7Zy9L3GcLc/qNtfhaadtWDVum/qf1uGvxo5dNWrRenXOZasXL40+J+iSFj34s/emu7/PIM3zY3qCj1eeX7z6zsSH6lt/L8xrD8wzdPfzW655pvX3oWDvhPuQA344rD8Ob/8damLfsfmhB6YeT/yM+Snxk2RPZh9J/LD/Ye6NJPe+87+kJDrz77dhNMwR+II3uw4ptO8UsiMLnO4RuLDESGU/sf9x5q978b4rj21+8XU+mD833WH09tKrLjr69+f0ZzmtX+DjajKnanZNZW3N9ZXO971NqZleYow8RkcE8gOjcwvz88bkZWfn5efk5wTsn/ID9s8F2QUFgdGB3Nzc/MCYQkfK95+7smeW81vDrpRJ7p+OgpyJ33CU2UZy7/foeakTv8Col0Q5O5X92HcieZkkfglRH4nJ24lM2nzzkZdP4hcJdZX4lKextl9g5CVP/N6aLhL5+2nM891DXtrEb4qRaR/t6KHN9tImfl+JTDsr3UOb46VN/AYQmXZoZw9trpc28a+by7SZJ3ho87y0iX+p3CNzdw/taC9t4l+Nk2njXtp8L23iX1OTaZcM8tAWeGkT/xqaTPvMYA/tGC9t4l8yk2kDQzy0hV7axL9QliHRNnpps9sEVuKfF5OJuw/1EreJrMTfz5eJ72lD3Ca0Eje3ZOIlE7zEbWIrcSXsIQ56idsEV2IbLRNHp3uJ20RXYi/lIa72ErcJr8RCKhOvvdpL3Ca+EouaTNx7ppe4TYAlViSZ+LU2xG0iLLEKycQT65i3hHmJE4tDf4n4rgTiw5etstLU1BEocsrpgrKP5zwplV7a1qNpSU1zEXsuNU3uvZRUTtPHHc/H/i+txZwt'
GUARD = 256
KERNEL = 'import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef kernel(in_0, s_in_0_0, s_in_0_1, in_1, s_in_1_0, s_in_1_1, in_2, s_in_2_0, s_in_2_1, in_3, s_in_3_0, in_4, s_in_4_0, s_in_4_1, out_0, out_1, s_out_1_0, s_out_1_1, out_2, s_out_2_0, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):\n    pid_m = tl.program_id(0)\n    offs_N = tl.arange(0, BLOCK_N)\n    offs_M = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    offs_K = tl.arange(0, BLOCK_K)\n    offs_2 = tl.arange(0, 2)\n    v_1 = tl.load(in_4 + (offs_M[:, None] * s_in_4_0 + offs_N[None, :] * s_in_4_1), mask=(offs_M < M)[:, None] & (offs_N < N)[None, :], other=0.0, cache_modifier=".ca")\n    v_2 = (v_1 / v_1).to(tl.float16)\n    v_3 = (tl.sum(v_1, axis=1)).to(tl.float32)\n    v_4 = tl.sqrt(v_3)\n    v_5 = pid_m == 1\n    if v_5:\n        v_7 = tl.where(v_5, pid_m, pid_m)\n        c_9 = v_1\n        for k_8 in tl.static_range(2):\n            offs_K_k_8 = k_8 * BLOCK_K + tl.arange(0, BLOCK_K)\n            k_8 = k_8 + tl.full([], 0, tl.int32)\n            v_10 = tl.cumsum(v_1.to(tl.float32), axis=1)\n            v_11 = v_10 >= 0\n            v_12 = pid_m ^ v_7\n            v_13 = tl.trans(v_11)\n            c_9 = v_2\n        y_6 = v_2\n    else:\n        if v_5:\n            return\n        v_14 = (tl.where(v_5, v_1, v_1)).to(tl.float16)\n        y_6 = v_2\n    v_15 = v_4 * v_3\n    v_16 = ~v_5\n    v_17 = tl.full([BLOCK_M, BLOCK_N], 0.0, tl.float32)\n    c_19 = v_17\n    c_20 = v_5\n    c_21 = v_5\n    for k_18 in range(0, 2):\n        offs_K_k_18 = k_18 * BLOCK_K + tl.arange(0, BLOCK_K)\n        v_22 = tl.load(in_0 + (offs_M[:, None] * s_in_0_0 + offs_K_k_18[None, :] * s_in_0_1), mask=(offs_M < M)[:, None] & (offs_K_k_18 < K)[None, :], other=0.0)\n        v_23 = tl.load(in_1 + (offs_K_k_18[:, None] * s_in_1_0 + offs_N[None, :] * s_in_1_1), mask=(offs_K_k_18 < K)[:, None] & (offs_N < N)[None, :], other=0.0)\n        v_24 = tl.reshape(v_17, [BLOCK_N, BLOCK_M])\n        v_25 = tl.load(in_4 + (offs_M[:, None] * s_in_4_0 + offs_N[None, :] * s_in_4_1), mask=(offs_M < M)[:, None] & (offs_N < N)[None, :], other=0.0)\n        v_26 = v_25.to(tl.float32)\n        v_27 = c_19 + v_26\n        v_28 = tl.dot(v_22, v_23, v_27)\n        c_19 = v_28\n        c_20 = c_21\n        c_21 = v_16\n    v_29 = c_21.to(tl.int32)\n    tl.atomic_add(out_0 + 0, v_29, sem="release", scope="sys")\n    v_30 = c_20.to(tl.int32)\n    tl.atomic_add(out_0 + 0, v_30, sem="acq_rel", scope="gpu")\n    tl.store(out_1 + (offs_M[:, None] * s_out_1_0 + offs_N[None, :] * s_out_1_1), c_19, mask=(offs_M < M)[:, None] & (offs_N < N)[None, :])\n    tl.store(out_2 + (offs_M * s_out_2_0), v_15, mask=(offs_M < M), cache_modifier=".wt")\n'


def child():
    import importlib.util
    import torch
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    data = torch.load(io.BytesIO(zlib.decompress(base64.b64decode(DATA))), weights_only=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.py")
        with open(path, "w") as f:
            f.write(KERNEL)
        spec = importlib.util.spec_from_file_location("gfxhound_repro_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = module.kernel
        values, constexprs, buffers = [], {}, {}
        for arg in ARGS:
            name = arg["name"]
            if arg["kind"] == "ptr":
                body = data["buffers"][name]
                size = body.element_size()
                after = GUARD // size + data["reach"][name]
                whole = torch.full(((GUARD // size + after + body.numel()) * size,), 0xA5, dtype=torch.uint8)
                whole = whole.view(body.dtype)
                whole[GUARD // size:GUARD // size + body.numel()].copy_(body)
                initial = whole.clone()
                whole = whole.to(device)
                buffers[name] = (whole, initial, body.numel())
                values.append(whole[GUARD // size:GUARD // size + body.numel()])
            elif arg["kind"] == "constexpr":
                constexprs[name] = arg["value"]
            else:
                values.append(float(arg["value"]) if arg["kind"] == "float" else int(arg["value"]))
        options = {}
        if device != "cpu":  # the options this backend knows (AMD knobs mean nothing to CUDA)
            from triton.compiler.compiler import make_backend
            from triton.runtime import driver
            backend = make_backend(driver.active.get_current_target())
            known = set(getattr(type(backend.parse_options({})), "__dataclass_fields__", {}))
            options = {k: v for k, v in OPTIONS.items() if k in known}
        os.environ.update(ENV_KNOBS)
        kernel[GRID](*values, **constexprs, **options)
        if device != "cpu":
            torch.cuda.synchronize()
    wrong = 0
    for name, (whole, initial, n) in buffers.items():
        whole = whole.cpu()
        g = GUARD // whole.element_size()
        if not torch.equal(whole[:g].view(torch.uint8), initial[:g].view(torch.uint8)) or not torch.equal(
                whole[g + n:].view(torch.uint8), initial[g + n:].view(torch.uint8)):
            print(f"{name}: a guard region was overwritten")
            wrong += 1
        if name.startswith("in_"):
            continue
        got, exp = whole[g:g + n], data["expected"][name]
        is_float = got.is_floating_point()
        got = got.to(torch.float64) if is_float else got.to(torch.int64)
        care, written = ~exp["bad"], exp["written"]
        if is_float:
            ref, e = exp["v"], exp["e"]
            close = (got - ref).abs() <= e * (1 + 1e-12)
            same = torch.where(torch.isnan(ref), torch.isnan(got),
                               torch.where(torch.isinf(ref), got == ref, ~torch.isnan(got) & close))
            stray = ~written & ~torch.isnan(got) if exp["mode"] == "store" else ~written & (got != 0)
        else:
            same = got == exp["v"]
            stray = ~written & (got != exp["fill"])
        bad = (care & written & ~same) | stray
        count = int(bad.sum())
        if count:
            i = int(torch.nonzero(bad).flatten()[0])
            print(f"{name}: {count} of {n} elements wrong; first [{i}] expected {exp['v'][i].item()} "
                  f"+- {exp['e'][i].item()}, got {got[i].item()}")
            wrong += count
    print(f"gfxhound-result: {wrong} wrong")
    sys.exit(3 if wrong else 0)


def main():
    if "--child" in sys.argv:
        try:
            import torch  # noqa: F401
            import triton  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            print(f"gfxhound-cannot-test: {exc}", file=sys.stderr)
            sys.exit(125)
        child()
        return 0
    env = dict(os.environ)
    if "--interpret" in sys.argv:
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory(prefix="gfxhound-repro-") as cache:
        env["TRITON_CACHE_DIR"] = cache
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print("cannot test: the kernel did not finish in time")
            return 125
    text = proc.stdout + proc.stderr
    if "--show" in sys.argv:
        print(text)
    if proc.returncode == 0 and "gfxhound-result: 0 wrong" in text:
        print("bug absent: every determined element is within its bound")
        return 0
    if proc.returncode == 3 and "gfxhound-result:" in text:
        print("bug present: " + text.split("gfxhound-result:")[0].strip().splitlines()[0][:300])
        return 1
    print("cannot test here: " + (text.strip().splitlines() or ["no output"])[-1][:300])
    return 125


if __name__ == "__main__":
    sys.exit(main())
