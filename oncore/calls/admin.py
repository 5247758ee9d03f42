from django.contrib import admin

from .models import Assistant, Call, Line


@admin.register(Assistant)
class AssistantAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant", "transcriber", "records_from", "records_until"]
    list_filter = ["tenant"]
    # Turning recording on sets records_from (and clears records_until); turning it off sets records_until. Calls
    # already imported keep what they were: the setting covers calls imported from then on without their own word.


class LineInline(admin.TabularInline):
    model = Line
    extra = 0


@admin.register(Call)
class CallAdmin(admin.ModelAdmin):
    list_display = ["id", "tenant", "assistant", "started_at", "recorded", "live_transcriber"]
    list_filter = ["tenant", "recorded"]
    date_hierarchy = "started_at"
    inlines = [LineInline]
    list_select_related = ["tenant", "assistant", "live_transcriber"]


@admin.register(Line)
class LineAdmin(admin.ModelAdmin):
    list_display = ["id", "call", "position", "speaker", "text", "start_s", "end_s"]
    list_filter = ["speaker"]
    raw_id_fields = ["call"]
