#include "server/api/moe_union_row_view.h"

#include <algorithm>

#include "server/store/moe_union_rows.h"

namespace gpuprobe {

v1::JobEvent MoeUnionRowView::View(v1::JobEvent event) {
  if (event.has_started()) {
    // A sweep's started event carries its ResolvedSweep; a check's and other probes' do not.
    sweep_.reset();
    reference_section_us_.reset();
    if (event.started().has_sweep()) sweep_ = event.started().sweep();
    return event;
  }
  if (!sweep_) return event;
  if (event.has_result()) {
    v1::Row row = RowOfResult(event.result(), *sweep_);
    const uint32_t t_max =
        sweep_->t_values().empty()
            ? 0
            : *std::max_element(sweep_->t_values().begin(), sweep_->t_values().end());
    if (row.arm().variant() == v1::KERNEL_VARIANT_PER_SLOT && row.arm().t() == t_max &&
        row.arm().union_size() == row.arm().slots()) {
      reference_section_us_ = row.section_us();
    }
    *event.mutable_row() = std::move(row);
    return event;
  }
  if (event.has_finished() && reference_section_us_) {
    event.mutable_finished()->set_reference_section_us(*reference_section_us_);
  }
  return event;
}

}  // namespace gpuprobe
