#include "operators/dft_fft_passes.h"

#include <cmath>
#include <utility>

// Bit-for-bit agreement with numpy needs every a * b + c rounded twice, as numpy's build does: no
// fused multiply-add here (the project builds with -march=native). GCC 12 fuses vectorized complex
// products (vfmaddsub) even under -ffp-contract=off, so its vectorizer is off in this file too.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "no-tree-vectorize")
#endif

namespace hetnet {
namespace {

// cos and sin of 2 pi k / p for k = 1..(p-1)/2 of the odd radices, as long double literals (pocketfft
// rounds these to the working type T).
struct RootLd {
  long double c, s;
};
const RootLd kRoots3[] = {{-0.5L, 0.8660254037844386467637231707529362L}};
const RootLd kRoots5[] = {{0.3090169943749474241022934171828191L, 0.9510565162951535721164393333793821L},
                          {-0.8090169943749474241022934171828191L, 0.5877852522924731291687059546390728L}};
const RootLd kRoots7[] = {{0.6234898018587335305250048840042398L, 0.7818314824680298087084445266740578L},
                          {-0.2225209339563144042889025644967948L, 0.9749279121818236070181316829939312L},
                          {-0.9009688679024191262361023195074451L, 0.4338837391175581204757683328483587L}};
const RootLd kRoots11[] = {{0.8412535328311811688618116489193677L, 0.5406408174555975821076359543186917L},
                           {0.4154150130018864255292741492296232L, 0.9096319953545183714117153830790285L},
                           {-0.1423148382732851404437926686163697L, 0.9898214418809327323760920377767188L},
                           {-0.6548607339452850640569250724662936L, 0.7557495743542582837740358439723444L},
                           {-0.9594929736144973898903680570663277L, 0.2817325568414296977114179153466169L}};
constexpr long double kPi = 3.141592653589793238462643383279502884197L;
constexpr long double kHalfSqrt2 = 0.707106781186547524400844362104849L;

// e^{2 pi i idx / n} in double, rounded to T: pocketfft's twiddle table. One cos/sin per entry of two
// tables of about sqrt(n) values (angles reduced to the first octant), an entry idx the product of
// v1[idx & mask] and v2[idx >> shift]; the second half of the circle by conjugation.
class UnitRoots {
 public:
  struct Hc {
    double r, i;
  };
  explicit UnitRoots(uint64_t n) : n_(n), ang_(static_cast<double>(0.25L * kPi / static_cast<long double>(n))) {
    const uint64_t nval = (n + 2) / 2;
    while ((uint64_t{1} << shift_) * (uint64_t{1} << shift_) < nval) ++shift_;
    mask_ = (uint64_t{1} << shift_) - 1;
    v1_.resize(mask_ + 1);
    v2_.resize((nval + mask_) / (mask_ + 1));
    for (uint64_t i = 0; i < v1_.size(); ++i) v1_[i] = i == 0 ? Hc{1, 0} : Octant(i);
    for (uint64_t i = 0; i < v2_.size(); ++i) v2_[i] = i == 0 ? Hc{1, 0} : Octant(i * (mask_ + 1));
  }
  template <typename T>
  typename PocketFftPlan<T>::Cx At(uint64_t idx) const {
    const bool upper = 2 * idx > n_;
    if (upper) idx = n_ - idx;
    const Hc a = v1_[idx & mask_], b = v2_[idx >> shift_];
    const T re = static_cast<T>(a.r * b.r - a.i * b.i), im = static_cast<T>(a.r * b.i + a.i * b.r);
    return {re, upper ? -im : im};
  }

 private:
  Hc Octant(uint64_t x) const {  // e^{2 pi i x / n}, 0 < x < n
    x <<= 3;
    const bool lower_half = x >= 4 * n_;  // mirror to the upper half, conjugate at the end
    if (lower_half) x = 8 * n_ - x;
    const bool second_quadrant = x >= 2 * n_;  // rotate by 90 degrees at the end
    if (second_quadrant) x -= 2 * n_;
    Hc v;
    if (x < n_) v = {std::cos(static_cast<double>(x) * ang_), std::sin(static_cast<double>(x) * ang_)};
    else v = {std::sin(static_cast<double>(2 * n_ - x) * ang_), std::cos(static_cast<double>(2 * n_ - x) * ang_)};
    if (second_quadrant) v = {-v.i, v.r};
    if (lower_half) v.i = -v.i;
    return v;
  }
  uint64_t n_, mask_ = 0;
  int shift_ = 1;
  double ang_;
  std::vector<Hc> v1_, v2_;
};

template <typename Cx>
inline Cx Add(Cx a, Cx b) { return {a.r + b.r, a.i + b.i}; }
template <typename Cx>
inline Cx Sub(Cx a, Cx b) { return {a.r - b.r, a.i - b.i}; }
template <typename Cx>
inline Cx Rot90(Cx a, bool fwd) { return fwd ? Cx{a.i, -a.r} : Cx{-a.i, a.r}; }  // times -i / +i
template <typename Cx>
inline Cx TwiddleMul(Cx v, Cx w, bool fwd) {  // v * w (inverse) or v * conj(w) (forward)
  return fwd ? Cx{v.r * w.r + v.i * w.i, v.i * w.r - v.r * w.i} : Cx{v.r * w.r - v.i * w.i, v.r * w.i + v.i * w.r};
}

// One radix-ip butterfly of the inputs c[0..ip) into out[0..ip), in pocketfft's order of operations.
template <typename T, typename Cx>
void Butterfly(int64_t ip, const Cx* c, Cx* out, bool fwd, const std::vector<Cx>& roots) {
  if (ip == 2) {
    out[0] = Add(c[0], c[1]);
    out[1] = Sub(c[0], c[1]);
  } else if (ip == 4) {
    const Cx t2 = Add(c[0], c[2]), t1 = Sub(c[0], c[2]), t3 = Add(c[1], c[3]), t4 = Rot90(Sub(c[1], c[3]), fwd);
    out[0] = Add(t2, t3), out[1] = Add(t1, t4), out[2] = Sub(t2, t3), out[3] = Sub(t1, t4);
  } else if (ip == 8) {
    const T h = static_cast<T>(kHalfSqrt2);
    Cx a1 = Add(c[1], c[5]), a5 = Sub(c[1], c[5]), a3 = Add(c[3], c[7]), a7 = Sub(c[3], c[7]);
    const Cx s13 = Add(a1, a3), d13 = Rot90(Sub(a1, a3), fwd);
    a7 = Rot90(a7, fwd);
    const Cx s57 = Add(a5, a7), d57 = Sub(a5, a7);
    a5 = fwd ? Cx{h * (s57.r + s57.i), h * (s57.i - s57.r)} : Cx{h * (s57.r - s57.i), h * (s57.i + s57.r)};
    a7 = fwd ? Cx{h * (d57.i - d57.r), h * (-d57.r - d57.i)} : Cx{h * (-d57.r - d57.i), h * (d57.r - d57.i)};
    const Cx a0 = Add(c[0], c[4]), a4 = Sub(c[0], c[4]), a2 = Add(c[2], c[6]), a6 = Rot90(Sub(c[2], c[6]), fwd);
    const Cx p02 = Add(a0, a2), m02 = Sub(a0, a2), p46 = Add(a4, a6), m46 = Sub(a4, a6);
    out[0] = Add(p02, s13), out[4] = Sub(p02, s13), out[2] = Add(m02, d13), out[6] = Sub(m02, d13);
    out[1] = Add(p46, a5), out[5] = Sub(p46, a5), out[3] = Add(m46, a7), out[7] = Sub(m46, a7);
  } else {  // odd prime 3, 5, 7, 11: sums and differences of the mirrored pairs, then each output pair
    const int64_t h = (ip - 1) / 2;
    Cx s[5], d[5];
    for (int64_t m = 1; m <= h; ++m) s[m - 1] = Add(c[m], c[ip - m]), d[m - 1] = Sub(c[m], c[ip - m]);
    out[0] = c[0];
    for (int64_t m = 0; m < h; ++m) out[0].r = out[0].r + s[m].r, out[0].i = out[0].i + s[m].i;
    for (int64_t u = 1; u <= h; ++u) {
      Cx a = c[0], b{};
      for (int64_t m = 1; m <= h; ++m) {
        int64_t k = (u * m) % ip;
        const bool mirrored = k > h;
        if (mirrored) k = ip - k;
        const T x = roots[k - 1].r, y = (fwd != mirrored) ? -roots[k - 1].i : roots[k - 1].i;
        a.r = a.r + x * s[m - 1].r, a.i = a.i + x * s[m - 1].i;
        const T pr = y * d[m - 1].i, pi = y * d[m - 1].r;
        b = m == 1 ? Cx{pr, pi} : Cx{b.r + pr, b.i + pi};
      }
      const Cx cb{-b.r, b.i};
      out[u] = Add(a, cb), out[ip - u] = Sub(a, cb);
    }
  }
}

}  // namespace

template <typename T>
bool PocketFftPlan<T>::Supports(int64_t n) {
  if (n < 1) return false;
  for (int64_t p : {2, 3, 5, 7, 11})
    while (n % p == 0) n /= p;
  return n == 1;
}

template <typename T>
PocketFftPlan<T>::PocketFftPlan(int64_t n) : n_(n) {
  // pocketfft's factorization: radix 8 first, then 4, a single 2 moved to the front, then odd factors.
  int64_t len = n;
  while (len % 8 == 0) factors_.push_back(8), len /= 8;
  while (len % 4 == 0) factors_.push_back(4), len /= 4;
  if (len % 2 == 0) {
    len /= 2;
    factors_.push_back(2);
    std::swap(factors_.front(), factors_.back());
  }
  for (int64_t p = 3; p * p <= len; p += 2)
    while (len % p == 0) factors_.push_back(p), len /= p;
  if (len > 1) factors_.push_back(len);
  // Other primes take pocketfft's generic pass (not reproduced here). With every prime factor <= 11,
  // pocketfft never picks Bluestein: that needs n >= 50 with a prime factor p, p * p > n, so p = 11 and
  // n < 121, where its cost guess for Bluestein is several times the direct one.
  supported_ = Supports(n);
  if (!supported_ || n == 1) return;
  const UnitRoots roots(static_cast<uint64_t>(n));
  int64_t l1 = 1;
  for (int64_t ip : factors_) {
    const int64_t ido = n / (l1 * ip);
    std::vector<Cx> tw((ip - 1) * (ido - 1));
    for (int64_t j = 1; j < ip; ++j)
      for (int64_t i = 1; i < ido; ++i)
        tw[(j - 1) * (ido - 1) + i - 1] = roots.At<T>(static_cast<uint64_t>(j * l1 * i));
    twiddles_.push_back(std::move(tw));
    l1 *= ip;
  }
}

template <typename T>
void PocketFftPlan<T>::Exec(std::vector<Cx>& c, bool forward, T fct) const {
  std::vector<Cx> buf(n_), odd_roots;
  Cx* p1 = c.data();
  Cx* p2 = buf.data();
  int64_t l1 = 1;
  for (size_t f = 0; f < factors_.size(); ++f) {
    const int64_t ip = factors_[f], ido = n_ / (l1 * ip);
    const Cx* wa = twiddles_[f].data();
    odd_roots.clear();
    const RootLd* tab = ip == 3 ? kRoots3 : ip == 5 ? kRoots5 : ip == 7 ? kRoots7 : ip == 11 ? kRoots11 : nullptr;
    for (int64_t k = 0; tab && k < (ip - 1) / 2; ++k)
      odd_roots.push_back({static_cast<T>(tab[k].c), static_cast<T>(tab[k].s)});
    Cx in[11], out[11];
    for (int64_t k = 0; k < l1; ++k)
      for (int64_t i = 0; i < ido; ++i) {
        for (int64_t j = 0; j < ip; ++j) in[j] = p1[i + ido * (j + ip * k)];
        Butterfly<T>(ip, in, out, forward, odd_roots);
        for (int64_t u = 0; u < ip; ++u)
          p2[i + ido * (k + l1 * u)] = i > 0 && u > 0 ? TwiddleMul(out[u], wa[(u - 1) * (ido - 1) + i - 1], forward)
                                                      : out[u];
      }
    std::swap(p1, p2);
    l1 *= ip;
  }
  for (int64_t i = 0; i < n_; ++i) {
    Cx v = p1[i];
    if (fct != T(1)) v.r *= fct, v.i *= fct;
    c[i] = v;
  }
}

template class PocketFftPlan<float>;
template class PocketFftPlan<double>;

}  // namespace hetnet
